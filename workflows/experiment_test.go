package workflows

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
)

func planOf(n, concurrency int) spec.Plan {
	p := spec.Plan{SpecName: "t", Concurrency: concurrency, Replicates: n, Conditions: []string{"clean"}, Cells: []string{"main"}}
	for i := 1; i <= n; i++ {
		p.Trials = append(p.Trials, spec.TrialPlan{ID: fmt.Sprintf("main/clean/%d", i), Cell: "main", Condition: "clean", Rep: i, Seed: int64(i)})
	}
	return p
}

type fakeTrials struct {
	running, maxRunning, started int
	ids                          map[string]int
}

// child is a stand-in trial that takes a minute of workflow time.
func (f *fakeTrials) child(ctx workflow.Context, in run.TrialInput) (run.TrialResult, error) {
	f.running++
	f.started++
	f.ids[in.Trial.ID]++
	f.maxRunning = max(f.maxRunning, f.running)
	defer func() { f.running-- }()
	// Dir is set as Verify sets it: the result is in the trial's folder.
	if err := workflow.Sleep(ctx, time.Minute); err != nil {
		return run.TrialResult{ID: in.Trial.ID, Outcome: run.OutcomeAborted, Dir: "trials/" + in.Trial.ID}, nil
	}
	return run.TrialResult{ID: in.Trial.ID, Outcome: run.OutcomeCompleted, Verdict: "correct", Dir: "trials/" + in.Trial.ID}, nil
}

func newExperimentEnv(t *testing.T) (*testsuite.TestWorkflowEnvironment, *fakeTrials, *run.AggregateInput) {
	env, f, agg, _ := newExperimentEnvWrites(t, nil)
	return env, f, agg
}

// newExperimentEnvWrites is newExperimentEnv with child as the trials (nil: the fake's),
// which also collects the results the workflow writes with RecordResult.
func newExperimentEnvWrites(t *testing.T, child func(workflow.Context, run.TrialInput) (run.TrialResult, error)) (*testsuite.TestWorkflowEnvironment, *fakeTrials, *run.AggregateInput, *[]run.TrialResult) {
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(TrialBatchWorkflow)
	env.RegisterActivity(a)
	f := &fakeTrials{ids: map[string]int{}}
	if child == nil {
		child = f.child
	}
	standIn(t, child)
	agg := &run.AggregateInput{}
	env.OnActivity(a.Aggregate, mock.Anything, mock.Anything).Return(func(_ context.Context, in run.AggregateInput) (run.Summary, error) {
		*agg = in
		return run.Summary{Trials: len(in.Plan.Trials)}, nil
	}).Maybe()
	var written []run.TrialResult
	env.OnActivity(a.RecordResult, mock.Anything, mock.Anything).Return(func(_ context.Context, in run.RecordResultInput) error {
		written = append(written, in.Result)
		return nil
	}).Maybe()
	return env, f, agg, &written
}

// standIn makes each attempt of a trial run trial instead of its activities.
func standIn(t *testing.T, trial func(workflow.Context, run.TrialInput) (run.TrialResult, error)) {
	runAttempt = func(ctx workflow.Context, in run.TrialInput, _ int) (run.TrialResult, error) { return trial(ctx, in) }
	t.Cleanup(func() { runAttempt = runTrial })
}

func TestExperimentRunsEveryTrialWithinConcurrency(t *testing.T) {
	env, f, _ := newExperimentEnv(t)
	var mid run.Progress
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(run.QueryProgress)
		require.NoError(t, err)
		require.NoError(t, v.Get(&mid))
	}, 90*time.Second)
	env.ExecuteWorkflow(ExperimentWorkflow, run.ExperimentInput{RunID: "r", Plan: planOf(7, 3)})
	require.NoError(t, env.GetWorkflowError())
	var res run.ExperimentResult
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Equal(t, 3, f.maxRunning, "concurrency limit")
	require.Equal(t, 7, f.started)
	for id, n := range f.ids {
		require.Equal(t, 1, n, "trial %s started %d times", id, n)
	}
	// After 90 s of workflow time the first three trials are done and three more run.
	require.Equal(t, run.Progress{Total: 7, Done: 3, Running: 3, ByOutcome: map[string]int{"correct": 3}}, mid)
}

func TestExperimentAbortStopsNewTrials(t *testing.T) {
	env, f, agg := newExperimentEnv(t)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(run.SignalAbort, "enough") }, 30*time.Second)
	env.ExecuteWorkflow(ExperimentWorkflow, run.ExperimentInput{RunID: "r", Plan: planOf(6, 2)})
	require.NoError(t, env.GetWorkflowError())
	var res run.ExperimentResult
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Equal(t, "enough", res.Aborted)
	require.Equal(t, 2, f.started, "no trial starts after the abort")
	// The two running trials finish (the test environment's mocked children do not see
	// the cancel); the four never started are Aggregate's to list, from the plan, as
	// aborted ("not started": activities' TestAggregateReadsResultsFromDisk).
	require.Equal(t, "enough", agg.Aborted)
	require.Len(t, agg.Plan.Trials, 6, "Aggregate gets the whole plan")
}

// A trial whose workflow fails (its retries spent) has no result.json from Verify: the
// experiment writes the failed result there, once, and counts it.
func TestExperimentWritesResultsItMade(t *testing.T) {
	env, _, agg, written := newExperimentEnvWrites(t, func(ctx workflow.Context, in run.TrialInput) (run.TrialResult, error) {
		if in.Trial.Rep == 2 {
			return run.TrialResult{}, errors.New("boom")
		}
		return run.TrialResult{ID: in.Trial.ID, Outcome: run.OutcomeCompleted, Verdict: "correct", Dir: "trials/" + in.Trial.ID}, nil
	})
	var end run.Progress
	env.ExecuteWorkflow(ExperimentWorkflow, run.ExperimentInput{RunID: "r", Plan: planOf(3, 3)})
	require.NoError(t, env.GetWorkflowError())
	v, err := env.QueryWorkflow(run.QueryProgress)
	require.NoError(t, err)
	require.NoError(t, v.Get(&end))
	require.Equal(t, run.Progress{Total: 3, Done: 3, ByOutcome: map[string]int{"correct": 2, run.OutcomeFailed: 1}}, end)
	require.Len(t, *written, 1)
	w := (*written)[0]
	require.Equal(t, "main/clean/2", w.ID)
	require.Equal(t, run.OutcomeFailed, w.Outcome)
	require.Contains(t, w.Reason, "boom")
	require.Len(t, agg.Plan.Trials, 3)
}

func TestExperimentContinuesAsNew(t *testing.T) {
	env, f, _ := newExperimentEnv(t)
	env.ExecuteWorkflow(ExperimentWorkflow, run.ExperimentInput{RunID: "r", Plan: planOf(5, 2), HistoryLimit: 2})
	err := env.GetWorkflowError()
	var can *workflow.ContinueAsNewError
	require.True(t, errors.As(err, &can), "want continue-as-new, got %v", err)
	require.Equal(t, 2, f.started)
	// The new run carries the next index and the counts so far, not the results.
	var next run.ExperimentInput
	require.NoError(t, converterFor().FromPayloads(can.Input, &next))
	require.Equal(t, 2, next.Next)
	require.Equal(t, run.Tally{Done: 2, By: map[string]int{"correct": 2}}, next.Tally)
}

// TestExperimentStopsWhenModelFaultNeverArmed: the first trial that ran to its end with no
// model call at the proxy proves the model fault can never be armed; no trial starts after
// it and the run says why.
func TestExperimentStopsWhenModelFaultNeverArmed(t *testing.T) {
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(TrialBatchWorkflow)
	env.RegisterActivity(a)
	started := 0
	trial := func(ctx workflow.Context, in run.TrialInput) (run.TrialResult, error) {
		started++
		_ = workflow.Sleep(ctx, time.Minute)
		return run.TrialResult{ID: in.Trial.ID, Outcome: run.OutcomeFailed, Verdict: "no_verdict",
			Model: &run.ModelResult{Fault: "llm_error_single", NeverCalled: in.Trial.Rep == 2}}, nil
	}
	standIn(t, trial)
	recorded := 0
	env.OnActivity(a.RecordResult, mock.Anything, mock.Anything).Return(func(_ context.Context, in run.RecordResultInput) error {
		recorded++
		return nil
	})
	var agg run.AggregateInput
	env.OnActivity(a.Aggregate, mock.Anything, mock.Anything).Return(func(_ context.Context, in run.AggregateInput) (run.Summary, error) {
		agg = in
		return run.Summary{}, nil
	})
	env.ExecuteWorkflow(ExperimentWorkflow, run.ExperimentInput{RunID: "r", Plan: planOf(6, 1)})
	require.NoError(t, env.GetWorkflowError())
	var res run.ExperimentResult
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Equal(t, 2, started, "no trial starts after the one that proved it")
	require.Equal(t, "trial main/clean/2 ran to its end with no model call at the model proxy, so model fault llm_error_single can never be armed in this run", res.NeverArmed)
	require.Equal(t, res.NeverArmed, res.Aborted)
	// The two trials that ran are written to their folders; Aggregate records the four
	// never started as aborted, with the run's reason.
	require.Equal(t, 2, recorded)
	require.Equal(t, res.NeverArmed, agg.Aborted)
}

// TestTrialLostManyTimesIsRunAgain: a trial whose worker is lost again and again (starved
// past its heartbeat timeout, say) is run again each time and ends with its real result,
// not failed.
func TestTrialLostManyTimesIsRunAgain(t *testing.T) {
	attempts := 0
	env, _, _, written := newExperimentEnvWrites(t, func(ctx workflow.Context, in run.TrialInput) (run.TrialResult, error) {
		attempts++
		if attempts <= 6 {
			return run.TrialResult{}, temporal.NewApplicationError("the worker running the trial was lost during run agent", ErrWorkerLost)
		}
		return run.TrialResult{ID: in.Trial.ID, Outcome: run.OutcomeCompleted, Verdict: "correct"}, nil
	})
	env.ExecuteWorkflow(ExperimentWorkflow, run.ExperimentInput{RunID: "r", Plan: planOf(1, 1)})
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, *written, 1)
	require.Equal(t, 7, attempts, "last: %+v", (*written)[0])
	require.Len(t, *written, 1)
	require.Equal(t, run.OutcomeCompleted, (*written)[0].Outcome, "reason: %s", (*written)[0].Reason)
}
