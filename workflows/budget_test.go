package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/workflow"

	"github.com/crashwall/chaos/cost"
	"github.com/crashwall/chaos/run"
)

// costly is a trial that takes a minute and spends usd on its model calls.
func costly(usd float64, started *int) func(workflow.Context, run.TrialInput) (run.TrialResult, error) {
	return func(ctx workflow.Context, in run.TrialInput) (run.TrialResult, error) {
		*started++
		if err := workflow.Sleep(ctx, time.Minute); err != nil {
			return run.TrialResult{ID: in.Trial.ID, Outcome: run.OutcomeAborted, Dir: "trials/" + in.Trial.ID}, nil
		}
		return run.TrialResult{ID: in.Trial.ID, Outcome: run.OutcomeCompleted, Verdict: "correct", Dir: "trials/" + in.Trial.ID,
			Cost: &run.TrialCost{Usage: cost.Usage{Calls: 3, USD: usd}}}, nil
	}
}

// TestExperimentBudget: with trials that cost $0.10 each, one at a time, a budget of $0.25
// runs two (after the second, $0.20 spent + $0.10 expected > $0.25) and says that the other
// four were not started and why; Aggregate lists them as not started for that reason.
func TestExperimentBudget(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		concurrency, started int
		budget, expected     float64
		says                 string
	}{
		{"one at a time", 1, 2, 0.25, 0, "4 trial(s) not started: the run had spent $0.20 of its budget of $0.25, and 1 more trial(s) at $0.10 each would exceed it (--budget)"},
		// Two at a time with an estimate of $0.10: two start ($0.20 expected); when the
		// first finishes ($0.10 spent, one still running) a third would need $0.30.
		{"two at a time, estimated", 2, 2, 0.25, 0.10, "4 trial(s) not started: the run had spent $0.10 of its budget of $0.25, and 2 more trial(s) at $0.10 each would exceed it (--budget)"},
		// An estimate above the budget starts nothing.
		{"estimate above the budget", 1, 0, 0.05, 0.10, "6 trial(s) not started: the run had spent $0 of its budget of $0.05, and 1 more trial(s) at $0.10 each would exceed it (--budget)"},
		{"no budget", 1, 6, 0, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			started := 0
			env, _, agg, _ := newExperimentEnvWrites(t, costly(0.10, &started))
			env.ExecuteWorkflow(ExperimentWorkflow, run.ExperimentInput{RunID: "r", Plan: planOf(6, tc.concurrency), BudgetUSD: tc.budget, ExpectedTrialUSD: tc.expected})
			require.NoError(t, env.GetWorkflowError())
			var res run.ExperimentResult
			require.NoError(t, env.GetWorkflowResult(&res))
			require.Equal(t, tc.started, started)
			require.Equal(t, tc.says, res.Budget)
			require.Equal(t, tc.says, agg.Aborted, "the trials not started carry the reason")
		})
	}
}
