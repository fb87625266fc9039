package workflows

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/workflow"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
)

// A plan made by spec.NewPlan travels as its layout: the workflow starts every planned
// trial once, and what it sends on (its continue-as-new input, Aggregate's input) is the
// layout again, not one row per trial.
func TestExperimentRunsLayoutPlan(t *testing.T) {
	s := &spec.Spec{Name: "t", Seed: 5, Tasks: []spec.Task{{ID: "a"}},
		Axes: []spec.Axis{{Name: "model", Values: []string{"x", "y"}}}}
	plan, err := spec.NewPlan(s, []string{"clean", "f"}, 3, 2)
	require.NoError(t, err)
	require.NotNil(t, plan.Layout)

	env, f, _ := newExperimentEnv(t)
	env.ExecuteWorkflow(ExperimentWorkflow, run.ExperimentInput{RunID: "r", Plan: *plan, HistoryLimit: 5})
	var can *workflow.ContinueAsNewError
	require.True(t, errors.As(env.GetWorkflowError(), &can), "want continue-as-new, got %v", env.GetWorkflowError())
	require.Len(t, can.Input.GetPayloads(), 1)
	data := string(can.Input.GetPayloads()[0].GetData())
	require.Contains(t, data, `"trials":{"layout":`)
	require.NotContains(t, data, `"id":`, "the continue-as-new input carries the layout, not the trials")
	var next run.ExperimentInput
	require.NoError(t, converterFor().FromPayloads(can.Input, &next))
	require.Equal(t, 5, next.Next)

	next.HistoryLimit = 0 // the rest in one run
	env2, f2, agg := newExperimentEnv(t)
	env2.ExecuteWorkflow(ExperimentWorkflow, next)
	require.NoError(t, env2.GetWorkflowError())
	for id := range f2.ids {
		f.ids[id]++
	}
	want := map[string]int{}
	for _, tr := range plan.Trials {
		want[tr.ID] = 1
	}
	require.Equal(t, want, f.ids, "every planned trial started once over the two runs")
	require.Equal(t, len(plan.Trials), len(agg.Plan.Trials), "Aggregate's plan names every trial")
	b, err := converterFor().ToPayload(*agg)
	require.NoError(t, err)
	require.True(t, strings.Contains(string(b.GetData()), `"trials":{"layout":`), "Aggregate's input carries the layout")
	require.False(t, strings.Contains(string(b.GetData()), `"id":`), "Aggregate's input carries the layout, not the trials")
}
