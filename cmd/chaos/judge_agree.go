package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/crashwall/chaos/report"
)

var humanLabels = map[string]string{
	"claimed": report.ClaimSuccess, "not claimed": report.ClaimFailure, "not_claimed": report.ClaimFailure,
	"unsure": report.ClaimUnclear,
}

// judgeAgree computes the judge's agreement with a filled-in form, and registers it.
func judgeAgree(opts *JudgeAgreeOptions) error {
	var key judgeKey
	b, err := os.ReadFile(opts.Form + ".key.json")
	if err != nil {
		return badInput(fmt.Errorf("the form's key %s.key.json: %w", opts.Form, err))
	}
	if err := json.Unmarshal(b, &key); err != nil {
		return badInput(fmt.Errorf("the form's key: %w", err))
	}
	if key.Reviewer != "" {
		return reviewerAgree(opts, key) // judge_reviewer.go
	}
	if opts.Agent == "" || opts.Language == "" {
		return badInput(errors.New("say whose messages these are: --agent PROFILE --language LANG (e.g. --agent claude-code --language en)"))
	}
	r, err := report.LoadRun(key.Run)
	if err != nil {
		return badInput(err)
	}
	claims := map[string]string{}
	for _, t := range r.Results {
		claims[t.ID] = t.Claim
	}
	human, judged, err := pairLabels(opts, key, humanLabels, "claimed, not claimed, unsure", func(tid string) (string, string) { return claims[tid], "" })
	if err != nil {
		return err
	}
	cats := []string{report.ClaimSuccess, report.ClaimFailure, report.ClaimUnclear}
	return measureAgreement(opts, human, judged, cats, fmt.Sprintf("judge vs person on %d messages (%s, %s)", len(human), opts.Agent, opts.Language), "judge",
		report.Agreement{Profile: opts.Agent, Language: opts.Language})
}

// measureAgreement prints the agreement of a person's labels with the machine's (Cohen's
// kappa, its interval, the direction matrix over cats) and, with --register, records it
// in the judge registry as entry.
func measureAgreement(opts *JudgeAgreeOptions, human, machine, cats []string, title, who string, entry report.Agreement) error {
	kappa, err := report.Kappa(human, machine)
	if err != nil {
		return badInput(fmt.Errorf("agreement cannot be computed: %w", err))
	}
	lo, hi := report.KappaCI(human, machine, report.DefaultConfidence, 2000, 1)
	m := report.DirectionMatrix(human, machine)
	fmt.Fprintf(opts.IO.Out, "%s: Cohen's kappa %.2f, 80%% bootstrap interval [%.2f, %.2f]\n\n", title, kappa, lo, hi)
	tw := tabwriter.NewWriter(opts.IO.Out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "person \\ "+who+"\t"+strings.Join(cats, "\t"))
	for _, h := range cats {
		row := []string{h}
		for _, j := range cats {
			row = append(row, fmt.Sprint(m[h][j]))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
	if opts.Register {
		path, err := registryPath(opts.Registry, opts.DataDir)
		if err != nil {
			return err
		}
		reg, err := report.LoadRegistry(path)
		if err != nil {
			return badInput(err)
		}
		entry.Kappa, entry.Lo, entry.Hi, entry.N, entry.Source, entry.Matrix = kappa, lo, hi, len(human), filepath.Base(opts.Form), m
		reg.Put(entry)
		if err := reg.Save(path); err != nil {
			return err
		}
		fmt.Fprintf(opts.IO.Out, "\nregistered in %s\n", path)
	}
	return nil
}

// pairLabels reads the filled-in form opts.Form and pairs each record's label (one of
// labels, which allowed names) with the machine's answer for its trial (answer's second
// value says why there is none); every record's problem is told in one error.
func pairLabels(opts *JudgeAgreeOptions, key judgeKey, labels map[string]string, allowed string, answer func(trial string) (string, string)) (human, machine []string, err error) {
	f, err := os.Open(opts.Form)
	if err != nil {
		return nil, nil, badInput(err)
	}
	defer f.Close()
	recs, err := readLabelForm(opts.Form, f)
	if err != nil {
		return nil, nil, badInput(err)
	}
	var problems []string
	// A row twice (a spreadsheet's copy) would count one message twice, and which of
	// its labels is meant cannot be told: the form is refused naming both.
	first := map[string]string{}
	for _, rec := range recs {
		id := strings.TrimSpace(rec.id)
		if at, dup := first[id]; dup {
			problems = append(problems, fmt.Sprintf("%s: id %q is labelled again (first at %s); keep one row per id", rec.where, rec.id, at))
			continue
		}
		first[id] = rec.where
		h, ok := labels[strings.ToLower(strings.TrimSpace(rec.label))]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: label %q is not one of %s", rec.where, rec.label, allowed))
			continue
		}
		tid, ok := key.Items[rec.id]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: id %q is not in the form's key", rec.where, rec.id))
			continue
		}
		a, why := answer(tid)
		if why != "" {
			problems = append(problems, rec.where+": "+why)
			continue
		}
		human, machine = append(human, h), append(machine, a)
	}
	if len(problems) > 0 {
		return nil, nil, badInput(errors.New(strings.Join(problems, "\n")))
	}
	return human, machine, nil
}

// labelRecord is one labelled row of a filled-in form.
type labelRecord struct {
	id, label string
	// where names it for a person: "form.csv: record 3 (line 5)". A record is not a
	// line: a closing message quoted over several lines is one record.
	where string
}

// readLabelForm reads a filled-in form's records after its header, skipping those with
// fewer than two fields.
func readLabelForm(name string, f io.Reader) ([]labelRecord, error) {
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1 // a row a spreadsheet cut short is skipped, not an error
	var out []labelRecord
	for n := 1; ; n++ {
		rec, err := r.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if n == 1 || len(rec) < 2 {
			continue // the header
		}
		line, _ := r.FieldPos(0)
		out = append(out, labelRecord{id: rec[0], label: rec[1], where: fmt.Sprintf("%s: record %d (line %d)", name, n, line)})
	}
}
