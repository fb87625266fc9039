package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/reviewer"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
)

// The labels a person gives a reviewer's case: whether the world the agent left is the
// one the task asked for, as the reviewer was asked.
var reviewerLabels = map[string]string{"right": reviewer.Right, "wrong": reviewer.Wrong, "unsure": reviewer.Unsure}

// reviewerSample writes a blind form of the cases the reviewer model was asked about:
// each the very case it read (the task, the condition, the question, every call with its
// reply and whether it reached the world, the closing message), never its answer or the
// trial's verdict. The key beside it names the trials and the reviewer.
func reviewerSample(opts *JudgeSampleOptions) error {
	if opts.Out == "" {
		return badInput(errors.New("say where to write the form: --out FORM.csv"))
	}
	r, err := report.LoadRun(opts.Run)
	if err != nil {
		return badInput(err)
	}
	var trials []run.TrialResult
	by := ""
	for _, t := range r.Results {
		if t.Review == nil {
			continue
		}
		if by != "" && t.Review.By != by {
			return badInput(fmt.Errorf("%s has cases of two reviewers (%s and %s): one form measures one", opts.Run, by, t.Review.By))
		}
		by = t.Review.By
		trials = append(trials, t)
	}
	if len(trials) == 0 {
		return badInput(fmt.Errorf("%s has no case the reviewer was asked about (no trial's result.json has a review)", opts.Run))
	}
	rng := rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15))
	rng.Shuffle(len(trials), func(i, j int) { trials[i], trials[j] = trials[j], trials[i] })
	if opts.N > 0 && opts.N < len(trials) {
		trials = trials[:opts.N]
	}
	abs, _ := filepath.Abs(opts.Run)
	key := judgeKey{Run: abs, Items: map[string]string{}, Reviewer: by}
	task := taskPrompt(r)
	f, err := os.Create(opts.Out)
	if err != nil {
		return badInput(err)
	}
	w := csv.NewWriter(f)
	w.Write([]string{"id", "label (right / wrong / unsure: is the world the one the task asked for?)", "why the record cannot tell", "the case (JSON, as the reviewer read it)"})
	for i, t := range trials {
		c, err := reviewCase(r, t, task)
		if err != nil {
			f.Close()
			return err
		}
		fid := fmt.Sprintf("c%03d", i+1)
		key.Items[fid] = t.ID
		w.Write([]string{fid, "", t.Review.Question, c})
	}
	if err := closeForm(f, w, opts.Out, key); err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.Out, "form: %s (%d cases of the reviewer %s)\nkey:  %s (keep it; do not show it to the labeller)\n", opts.Out, len(trials), by, opts.Out+".key.json")
	return nil
}

// reviewCase is the case of a trial as the reviewer read it, indented JSON.
func reviewCase(r *report.Run, t run.TrialResult, task string) (string, error) {
	dir := t.Dir
	if dir == "" {
		dir = filepath.Join(r.Dir, "trials", t.ID)
	}
	log, err := record.ReadFile(filepath.Join(dir, "record.jsonl"))
	if log == nil {
		return "", badInput(fmt.Errorf("trial %s: its record cannot be read: %w", t.ID, err))
	}
	b, err := json.MarshalIndent(reviewer.NewCase(task, t.Condition, t.Review.Question, log, t.Closing), "", " ")
	return string(b), err
}

// taskPrompt is the run's task as the reviewer read it: the prompt of the spec's one
// task (the run folder keeps the spec), or "" when it cannot be told.
func taskPrompt(r *report.Run) string {
	for _, p := range []string{filepath.Join(r.Dir, "spec.yaml"), r.Manifest.Spec.Path} {
		if p == "" {
			continue
		}
		if s, err := spec.Load(p); err == nil && len(s.Tasks) == 1 {
			return s.Tasks[0].Prompt
		}
	}
	return ""
}

// reviewerAgree computes the reviewer's agreement with a person's labels of its cases,
// and registers it under the reviewer's name.
func reviewerAgree(opts *JudgeAgreeOptions, key judgeKey) error {
	r, err := report.LoadRun(key.Run)
	if err != nil {
		return badInput(err)
	}
	answers := map[string]string{}
	for _, t := range r.Results {
		if t.Review != nil && t.Review.By == key.Reviewer {
			answers[t.ID] = t.Review.Verdict
		}
	}
	f, err := os.Open(opts.Form)
	if err != nil {
		return badInput(err)
	}
	defer f.Close()
	recs, err := readLabelForm(opts.Form, f)
	if err != nil {
		return badInput(err)
	}
	var human, machine, problems []string
	for _, rec := range recs {
		h, ok := reviewerLabels[strings.ToLower(strings.TrimSpace(rec.label))]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: label %q is not one of right, wrong, unsure", rec.where, rec.label))
			continue
		}
		tid, ok := key.Items[rec.id]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: id %q is not in the form's key", rec.where, rec.id))
			continue
		}
		a, ok := answers[tid]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: trial %s has no answer of the reviewer %s in %s", rec.where, tid, key.Reviewer, key.Run))
			continue
		}
		human, machine = append(human, h), append(machine, a)
	}
	if len(problems) > 0 {
		return badInput(errors.New(strings.Join(problems, "\n")))
	}
	cats := []string{reviewer.Right, reviewer.Wrong, reviewer.Unsure}
	return measureAgreement(opts, human, machine, cats, fmt.Sprintf("reviewer %s vs person on %d cases", key.Reviewer, len(human)), "reviewer",
		report.Agreement{Reviewer: key.Reviewer})
}
