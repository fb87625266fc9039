package workflows

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/workflow"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
)

// TestExperimentBranchCleanFirst: with Plan.Branch, every clean trial runs (and ends)
// before any fault trial starts, even with room for all at once, and each fault trial is
// told its cell's clean trial of the same replicate (or its cell's first); without it,
// trials start in plan order and branch from nothing.
func TestExperimentBranchCleanFirst(t *testing.T) {
	plan := func(branch bool) spec.Plan {
		p := spec.Plan{SpecName: "t", Concurrency: 8, Replicates: 2, Conditions: []string{"phantom_success@w", "clean"}, Cells: []string{"a", "b"}, Branch: branch}
		for _, cell := range []string{"a", "b"} {
			for _, c := range []string{"phantom_success@w", "clean"} {
				for rep := 1; rep <= 2; rep++ {
					if cell == "b" && c == "clean" && rep == 2 {
						continue // b has no clean trial of replicate 2: its first
					}
					p.Trials = append(p.Trials, spec.TrialPlan{ID: fmt.Sprintf("%s/%s/%d", cell, c, rep), Cell: cell, Condition: c, Rep: rep})
				}
			}
		}
		return p
	}
	for _, branch := range []bool{true, false} {
		type event struct {
			id, from string
			at       time.Time
			end      bool
		}
		var events []event
		child := func(ctx workflow.Context, in run.TrialInput) (run.TrialResult, error) {
			events = append(events, event{id: in.Trial.ID, from: in.BranchFrom, at: workflow.Now(ctx)})
			workflow.Sleep(ctx, time.Minute)
			events = append(events, event{id: in.Trial.ID, at: workflow.Now(ctx), end: true})
			return run.TrialResult{ID: in.Trial.ID, Outcome: run.OutcomeCompleted, Verdict: "correct", Dir: "trials/" + in.Trial.ID}, nil
		}
		env, _, _, _ := newExperimentEnvWrites(t, child)
		env.ExecuteWorkflow(ExperimentWorkflow, run.ExperimentInput{RunID: "r", Plan: plan(branch), OutDir: "/tmp/x"})
		require.True(t, env.IsWorkflowCompleted())
		require.NoError(t, env.GetWorkflowError())

		from := map[string]string{}
		var lastCleanEnd, firstFaultStart time.Time
		for _, e := range events {
			clean := e.id[2:7] == "clean"
			switch {
			case e.end && clean && e.at.After(lastCleanEnd):
				lastCleanEnd = e.at
			case !e.end && !clean:
				from[e.id] = e.from
				if firstFaultStart.IsZero() || e.at.Before(firstFaultStart) {
					firstFaultStart = e.at
				}
			case !e.end && clean:
				require.Empty(t, e.from, "a clean trial branches from nothing")
			}
		}
		require.Len(t, from, 4)
		if !branch {
			require.True(t, firstFaultStart.Before(lastCleanEnd), "without --branch the trials start together")
			for id, f := range from {
				require.Empty(t, f, id)
			}
			continue
		}
		require.False(t, firstFaultStart.Before(lastCleanEnd), "a fault trial started before the clean trials ended")
		require.Equal(t, map[string]string{
			"a/phantom_success@w/1": "a/clean/1", "a/phantom_success@w/2": "a/clean/2",
			"b/phantom_success@w/1": "b/clean/1", "b/phantom_success@w/2": "b/clean/1",
		}, from)
	}
}
