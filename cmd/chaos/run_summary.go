package main

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"

	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
)

func printSummary(ios *IOStreams, res run.ExperimentResult) {
	fmt.Fprintf(ios.Out, "\n%d trials", res.Summary.Trials)
	if res.Aborted != "" {
		fmt.Fprintf(ios.Out, " (run aborted: %s)", res.Aborted)
	}
	fmt.Fprintln(ios.Out)
	keys := slices.Sorted(maps.Keys(res.Summary.ByVerdict))
	for _, k := range keys {
		fmt.Fprintf(ios.Out, "  %-20s %d\n", k, res.Summary.ByVerdict[k])
	}
	// What must be known before any rate is read is printed before the rates.
	warnings, notCorrect, cells := res.Summary.Warnings, res.Summary.CleanNotCorrect, res.Summary.Cells
	if res.Results != nil { // a run started before results stayed on disk
		warnings, notCorrect, cells = report.Warnings(res.Results), report.CleanNotCorrect(res.Results), headline(res.Results)
	}
	if len(warnings) > 0 {
		fmt.Fprintln(ios.Out)
	}
	for _, w := range warnings {
		fmt.Fprintln(ios.Out, "warning: "+w)
	}
	results := res.Results
	if results == nil {
		// The results are on disk (verdicts.json); the reviewer's notes need them.
		if r, err := report.LoadRun(res.OutDir); err == nil {
			results = r.Results
		}
	}
	printHeadline(ios, cells, len(notCorrect) > 0, results)
	if res.Summary.Cost != "" {
		fmt.Fprintf(ios.Out, "\ncost: %s\n", res.Summary.Cost)
	}
	if res.Budget != "" {
		fmt.Fprintf(ios.Out, "budget: %s\n", res.Budget)
	}
	fmt.Fprintf(ios.Out, "\nrun folder: %s\n", res.OutDir)
	fmt.Fprintf(ios.Out, "summary:    %s\n", filepath.Join(res.OutDir, "summary.txt"))
	fmt.Fprintf(ios.Out, "report:     %s\n", filepath.Join(res.OutDir, "report.html"))
	if res.Summary.ResultsDB != "" {
		fmt.Fprintln(ios.ErrOut, "warning: "+res.Summary.ResultsDB)
	}
}

// printHeadline prints the number the run exists for, per cell: how often the agent said
// "done" when the world was wrong, over the scored trials, with its 80% interval.
func printHeadline(ios *IOStreams, byCell map[string]run.CellCount, notComparable bool, results []run.TrialResult) {
	cells := make([]string, 0, len(byCell))
	for cell := range byCell {
		cells = append(cells, cell)
	}
	sort.Strings(cells)
	heading := "silent wrong (said done, world wrong), over scored trials, 80% interval:"
	if notComparable {
		heading = "silent wrong (said done, world wrong), over scored trials, 80% interval; NOT comparable: clean is not correct in every scored trial, so the other conditions cannot be read against it:"
	}
	fmt.Fprintln(ios.Out, "\n"+heading)
	for _, cell := range cells {
		c := byCell[cell]
		line := fmt.Sprintf("  %-20s %s", cell, report.NewRate(c.SilentWrong, c.Scored))
		// A rate that rests in part on the reviewer's word says so, with its agreement.
		if note := report.ReviewedNote(results, func(t run.TrialResult) bool { return t.Cell == cell }); note != "" {
			line += "; " + note
		}
		fmt.Fprintln(ios.Out, line)
	}
}

// headline counts, per cell, the scored trials and the silent wrong ones, as Aggregate
// does into run.Summary.Cells.
func headline(results []run.TrialResult) map[string]run.CellCount {
	byCell := map[string]run.CellCount{}
	for _, r := range results {
		c := byCell[r.Cell]
		if report.Scored(r.Verdict) {
			c.Scored++
			if r.Verdict == report.SilentWrong {
				c.SilentWrong++
			}
		}
		byCell[r.Cell] = c
	}
	return byCell
}

// stoppedEarly is the error (exit 6) of a run that stopped before all its trials ran: a
// script must not read an aborted or budget-stopped run's numbers as a whole run's.
func stoppedEarly(res run.ExperimentResult) error {
	switch {
	case res.Budget != "":
		return &ExitError{Code: ExitStopped, Err: fmt.Errorf("run %s stopped before all its trials ran: %s; %s holds the trials that did", res.RunID, res.Budget, res.OutDir)}
	case res.Aborted != "":
		return &ExitError{Code: ExitStopped, Err: fmt.Errorf("run %s was aborted (%s); %s holds the trials that ran", res.RunID, res.Aborted, res.OutDir)}
	}
	return nil
}
