package main

import (
	"fmt"
	"path/filepath"
	"sort"

	"github.com/crashwall/chaos/cost"
	"github.com/crashwall/chaos/report"
)

// estimateTrialCost is what a trial of the spec cost in its latest finished run under
// runsDir (the mean over its trials with a cost), and the run it comes from; ok is false
// when no earlier run had model calls.
func estimateTrialCost(runsDir string) (perTrial float64, from string, ok bool) {
	dirs, _ := filepath.Glob(filepath.Join(runsDir, "*", "verdicts.json"))
	sort.Sort(sort.Reverse(sort.StringSlice(dirs))) // run ids begin with their start time
	for _, v := range dirs {
		r, err := report.LoadRun(filepath.Dir(v))
		if err != nil {
			continue
		}
		if cells, total := report.Costs(r.Results); cells != nil && total.Trials > 0 {
			return cost.Round(total.Spent / float64(total.Trials)), r.Manifest.RunID, true
		}
	}
	return 0, "", false
}

// costPlanLine is the plan's cost line: the estimate for the planned trials, and the
// budget when one is given.
func costPlanLine(runsDir string, trials int, budget float64) (line string, perTrial float64) {
	per, from, ok := estimateTrialCost(runsDir)
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
func checkBudget(usd float64) error {
	if usd < 0 || usd != usd {
		return badInput(fmt.Errorf("--budget must be an amount of US dollars above 0, got %v", usd))
	}
	return nil
}
