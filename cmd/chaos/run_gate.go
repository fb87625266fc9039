package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/spec"
)

// ExitGate: the run finished and a --gate or --gate-regression failed: the evidence says,
// at the run's confidence, that a bar is broken (docs/verdicts.md#gates).
const ExitGate = 5

// parseGates reads --gate values against the spec's outcomes and checks --gate-regression's
// run folder, before anything runs.
func parseGates(texts []string, regression string, s *spec.Spec) ([]report.Gate, error) {
	known := report.GateOutcomes(report.OutcomeNamesOf(s.Outcomes))
	var gates []report.Gate
	for _, t := range texts {
		g, err := report.ParseGate(t)
		if err != nil {
			return nil, badInput(fmt.Errorf("--gate: %w", err))
		}
		if !slices.Contains(known, g.Outcome) {
			msg := fmt.Sprintf("--gate %q: unknown outcome %q", t, g.Outcome)
			if m, ok := spec.Closest(g.Outcome, known); ok {
				msg += fmt.Sprintf(" (did you mean %s?)", m)
			} else {
				msg += " (known: " + strings.Join(known, ", ") + ")"
			}
			return nil, badInput(errors.New(msg))
		}
		gates = append(gates, g)
	}
	if regression != "" {
		if _, err := report.LoadRun(regression); err != nil {
			return nil, badInput(fmt.Errorf("--gate-regression: %w", err))
		}
	}
	return gates, nil
}

// checkGates judges the gates on the finished run in dir and prints them; a failed one
// is an ExitGate error naming it.
func checkGates(ios *IOStreams, dir string, gates []report.Gate, regression string) error {
	if len(gates) == 0 && regression == "" {
		return nil
	}
	r, err := report.LoadRun(dir)
	if err != nil {
		return fmt.Errorf("read the run to judge its gates: %w", err)
	}
	var failed []string
	fmt.Fprintf(ios.Out, "\ngates (%.0f%% anytime-valid confidence sequence: a gate fails only when it lies wholly past the bar):\n", 100*report.DefaultConfidence)
	for _, g := range gates {
		results := report.EvaluateGates([]report.Gate{g}, r.Results, r.Manifest.Outcomes)
		counts := map[string]int{}
		for _, res := range results {
			counts[res.Call]++
			if res.Call == "fail" {
				failed = append(failed, g.Text+" on "+res.Cell+" "+res.Condition)
				fmt.Fprintf(ios.Out, "  FAIL %s: %s\n", g.Text, res)
			}
		}
		fmt.Fprintf(ios.Out, "  %s: %d cell(s) x condition(s) failed, %d passed, %d undecided (too few trials to tell)\n",
			g.Text, counts["fail"], counts["pass"], counts["undecided"])
	}
	if regression != "" {
		base, err := report.LoadRun(regression)
		if err != nil {
			return badInput(fmt.Errorf("--gate-regression: %w", err))
		}
		rows, err := report.Diff(base, r, false)
		if err != nil {
			return badInput(fmt.Errorf("--gate-regression %s: %w (the baseline must share seeds: run with --pair-with)", regression, err))
		}
		worse := 0
		for _, row := range rows {
			if row.Call == "worse" {
				worse++
				failed = append(failed, fmt.Sprintf("regression against %s on %s %s", base.Manifest.RunID, row.Cell, row.Condition))
				fmt.Fprintf(ios.Out, "  FAIL regression: %s %s: silent wrong %s -> %s, McNemar p %s < %.2f\n",
					row.Cell, row.Condition, row.A, row.B, report.FormatP(row.P), report.Alpha)
			}
		}
		fmt.Fprintf(ios.Out, "  regression against %s: %d of %d cell(s) x condition(s) worse at alpha %.2f\n", base.Manifest.RunID, worse, len(rows), report.Alpha)
	}
	if len(failed) > 0 {
		return &ExitError{Code: ExitGate, Err: fmt.Errorf("%d gate(s) failed: %s", len(failed), strings.Join(failed, "; "))}
	}
	return nil
}
