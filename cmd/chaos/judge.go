package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/crashwall/chaos/report"
)

// NewCmdJudge builds `chaos judge`: measuring the claim judge against human labels.
func NewCmdJudge(ios *IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "judge",
		Short: "Measure the claim judge against a person's labels",
		Long: `The claim behind every verdict is read by a judge. To know how far to trust it, a
person labels a blind sample of closing messages and chaos computes the agreement:

  chaos judge sample RUN_FOLDER --out form.csv     write a blind, shuffled form
  (fill in the label column: claimed, not claimed or unsure)
  chaos judge agree form.csv --agent claude-code --language en --register

Every report then states the measured agreement for its agent and language, or warns
that the judge was not measured there.`,
	}
	cmd.AddCommand(newCmdJudgeSample(ios), newCmdJudgeAgree(ios))
	return cmd
}

type judgeKey struct {
	Run   string            `json:"run"`
	Items map[string]string `json:"items"` // form id -> trial id
}

func newCmdJudgeSample(ios *IOStreams) *cobra.Command {
	var out string
	var n int
	var seed uint64
	cmd := &cobra.Command{
		Use:   "sample RUN_FOLDER --out FORM.csv [--n 60]",
		Short: "Write a blind labelling form: closing messages, shuffled, with no verdicts",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return badInput(errors.New("say where to write the form: --out FORM.csv"))
			}
			r, err := report.LoadRun(args[0])
			if err != nil {
				return badInput(err)
			}
			var ids []string
			msgs := map[string]string{}
			for _, t := range r.Results {
				if strings.TrimSpace(t.Closing) != "" {
					ids = append(ids, t.ID)
					msgs[t.ID] = t.Closing
				}
			}
			if len(ids) == 0 {
				return badInput(fmt.Errorf("%s has no closing messages to label", args[0]))
			}
			rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
			rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
			if n > 0 && n < len(ids) {
				ids = ids[:n]
			}
			abs, _ := filepath.Abs(args[0])
			key := judgeKey{Run: abs, Items: map[string]string{}}
			f, err := os.Create(out)
			if err != nil {
				return badInput(err)
			}
			w := csv.NewWriter(f)
			w.Write([]string{"id", "label (claimed / not claimed / unsure)", "closing message"})
			for i, id := range ids {
				// Opaque ids: a trial id names its condition, which would unblind the labeller.
				fid := fmt.Sprintf("m%03d", i+1)
				key.Items[fid] = id
				w.Write([]string{fid, "", msgs[id]})
			}
			w.Flush()
			if err := w.Error(); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
			b, _ := json.MarshalIndent(key, "", "  ")
			if err := os.WriteFile(out+".key.json", b, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(ios.Out, "form: %s (%d closing messages)\nkey:  %s (keep it; do not show it to the labeller)\n", out, len(ids), out+".key.json")
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "the form to write (CSV); its key goes beside it as FORM.key.json")
	cmd.Flags().IntVar(&n, "n", 60, "how many messages (0: all)")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "shuffle seed")
	return cmd
}

var humanLabels = map[string]string{
	"claimed": report.ClaimSuccess, "not claimed": report.ClaimFailure, "not_claimed": report.ClaimFailure,
	"unsure": report.ClaimUnclear,
}

func newCmdJudgeAgree(ios *IOStreams) *cobra.Command {
	var agent, language, registry, dataDirFlag string
	var register bool
	cmd := &cobra.Command{
		Use:   "agree FORM.csv --agent PROFILE --language LANG [--register]",
		Short: "Compute the judge's agreement with a labelled form (Cohen's kappa, its interval, the direction matrix)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if agent == "" || language == "" {
				return badInput(errors.New("say whose messages these are: --agent PROFILE --language LANG (e.g. --agent claude-code --language en)"))
			}
			var key judgeKey
			b, err := os.ReadFile(args[0] + ".key.json")
			if err != nil {
				return badInput(fmt.Errorf("the form's key %s.key.json: %w", args[0], err))
			}
			if err := json.Unmarshal(b, &key); err != nil {
				return badInput(fmt.Errorf("the form's key: %w", err))
			}
			r, err := report.LoadRun(key.Run)
			if err != nil {
				return badInput(err)
			}
			claims := map[string]string{}
			for _, t := range r.Results {
				claims[t.ID] = t.Claim
			}
			f, err := os.Open(args[0])
			if err != nil {
				return badInput(err)
			}
			defer f.Close()
			recs, err := readLabelForm(args[0], f)
			if err != nil {
				return badInput(err)
			}
			var human, judged []string
			var problems []string
			for _, rec := range recs {
				label := strings.ToLower(strings.TrimSpace(rec.label))
				h, ok := humanLabels[label]
				if !ok {
					problems = append(problems, fmt.Sprintf("%s: label %q is not one of claimed, not claimed, unsure", rec.where, rec.label))
					continue
				}
				tid, ok := key.Items[rec.id]
				if !ok {
					problems = append(problems, fmt.Sprintf("%s: id %q is not in the form's key", rec.where, rec.id))
					continue
				}
				human = append(human, h)
				judged = append(judged, claims[tid])
			}
			if len(problems) > 0 {
				return badInput(errors.New(strings.Join(problems, "\n")))
			}
			kappa, err := report.Kappa(human, judged)
			if err != nil {
				return badInput(fmt.Errorf("agreement cannot be computed: %w", err))
			}
			lo, hi := report.KappaCI(human, judged, report.DefaultConfidence, 2000, 1)
			m := report.DirectionMatrix(human, judged)
			fmt.Fprintf(ios.Out, "judge vs person on %d messages (%s, %s): Cohen's kappa %.2f, 80%% bootstrap interval [%.2f, %.2f]\n\n", len(human), agent, language, kappa, lo, hi)
			cats := []string{report.ClaimSuccess, report.ClaimFailure, report.ClaimUnclear}
			tw := tabwriter.NewWriter(ios.Out, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "person \\ judge\t"+strings.Join(cats, "\t"))
			for _, h := range cats {
				row := []string{h}
				for _, j := range cats {
					row = append(row, fmt.Sprint(m[h][j]))
				}
				fmt.Fprintln(tw, strings.Join(row, "\t"))
			}
			tw.Flush()
			if register {
				path, err := registryPath(registry, dataDirFlag)
				if err != nil {
					return err
				}
				reg, err := report.LoadRegistry(path)
				if err != nil {
					return badInput(err)
				}
				reg.Put(report.Agreement{Profile: agent, Language: language, Kappa: kappa, Lo: lo, Hi: hi, N: len(human), Source: filepath.Base(args[0]), Matrix: m})
				if err := reg.Save(path); err != nil {
					return err
				}
				fmt.Fprintf(ios.Out, "\nregistered in %s\n", path)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&agent, "agent", "", "the agent profile whose messages were labelled (claude-code, codex, goose, generic, scripted)")
	cmd.Flags().StringVar(&language, "language", "", "the language of the messages (en, tr, ...)")
	cmd.Flags().BoolVar(&register, "register", false, "record the result in the judge registry")
	cmd.Flags().StringVar(&registry, "registry", "", "judge registry (default <data dir>/judges.json)")
	cmd.Flags().StringVar(&dataDirFlag, "data-dir", "", "data directory (default $XDG_DATA_HOME/chaos)")
	return cmd
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
