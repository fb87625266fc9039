package main

import (
	"fmt"
	"github.com/crashwall/chaos/run"
	"path/filepath"
	"sort"

	"github.com/crashwall/chaos/cost"
	"github.com/crashwall/chaos/report"
)

// estimateTrialCost is what a trial of the spec named spec cost in its latest finished run
// found in dirs (each a folder of run folders: the spec's default one, and the folder
// that holds --out's run folder, where runs written with --out sit side by side): the
// mean over its trials with a cost, and the run it comes from; ok is false when no
// earlier run of the spec had model calls.
func estimateTrialCost(spec string, dirs ...string) (perTrial float64, from string, ok bool) {
	var found []string
	seen := map[string]bool{}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		m, _ := filepath.Glob(filepath.Join(d, "*", "verdicts.json"))
		for _, v := range m {
			if abs, err := filepath.Abs(v); err == nil && !seen[abs] {
				seen[abs] = true
				found = append(found, abs)
			}
		}
	}
	type candidate struct {
		r    *report.Run
		when string
	}
	var runs []candidate
	for _, v := range found {
		r, err := report.LoadRun(filepath.Dir(v))
		if err != nil || (spec != "" && r.Manifest.Spec.Name != spec) {
			continue
		}
		// Run ids begin with their start time; a folder's name (--out) need not.
		runs = append(runs, candidate{r, r.Manifest.RunID})
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].when > runs[j].when })
	for _, c := range runs {
		if cells, total := report.Costs(c.r.Results); cells != nil && total.Trials > 0 {
			return cost.Round(total.Spent / float64(total.Trials)), c.r.Manifest.RunID, true
		}
	}
	return 0, "", false
}

// costPlanLine is the plan's cost line: the estimate for the planned trials, and the
// budget when one is given.
func costPlanLine(spec string, dirs []string, trials int, budget float64) (line string, perTrial float64) {
	per, from, ok := estimateTrialCost(spec, dirs...)
	switch {
	case ok:
		line = fmt.Sprintf("estimated cost: %s (%s a trial, as in run %s)", cost.Format(cost.Round(per*float64(trials))), cost.Format(per), from)
	default:
		line = "estimated cost: unknown (no earlier run of this spec had model calls through {llm_url})"
	}
	if budget > 0 {
		line += fmt.Sprintf("; budget %s", cost.Format(budget))
	}
	return line, per
}

// checkBudget refuses a budget that is not a positive amount.
func checkBudget(usd float64, inFlight int) error {
	if usd < 0 || usd != usd {
		return badInput(fmt.Errorf("--budget must be an amount of US dollars above 0, got %v", usd))
	}
	// Under a budget one batch of trials runs at a time (workflows/experiment.go), so
	// that each trial starts where every running trial's spending is known.
	if usd > 0 && inFlight > run.DefaultBatchSize {
		return badInput(fmt.Errorf("--budget runs at most %d trials at once (each trial starts only where every running trial's spending is known), and this run asks for %d: lower --concurrency to %d, or run without --budget",
			run.DefaultBatchSize, inFlight, run.DefaultBatchSize))
	}
	return nil
}
