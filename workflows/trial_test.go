package workflows

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/crashwall/chaos/activities"
	"github.com/crashwall/chaos/run"
)

// oneStepEnv is an experiment with every activity mocked but the trial's own steps, which
// the test gives; it collects the results the workflow writes with RecordResult.
func oneStepEnv(t *testing.T) (*testsuite.TestWorkflowEnvironment, *[]run.TrialResult) {
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(TrialBatchWorkflow)
	env.RegisterActivity(a)
	var mu sync.Mutex
	var written []run.TrialResult
	env.OnActivity(a.RecordResult, mock.Anything, mock.Anything).Return(func(_ context.Context, in run.RecordResultInput) error {
		mu.Lock()
		defer mu.Unlock()
		written = append(written, in.Result)
		return nil
	}).Maybe()
	env.OnActivity(a.Aggregate, mock.Anything, mock.Anything).Return(run.Summary{}, nil)
	return env, &written
}

const hostQ = "chaos@host-1-abc"

var ws = run.Workspace{Dir: "/tmp/sandbox", TrialDir: "/tmp/out/trials/main/clean/1"}

// queueOf is the task queue an activity was scheduled on.
func queueOf(ctx context.Context) string { return activity.GetInfo(ctx).TaskQueue }

// steps records the activity ids a test's mocks saw, in order.
type steps struct {
	mu  sync.Mutex
	ids []string
}

func (s *steps) saw(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids = append(s.ids, activity.GetInfo(ctx).ActivityID)
}

// verifyEcho returns a result that echoes what Verify was told, so tests can see it.
func verifyEcho(_ context.Context, in run.VerifyInput) (run.TrialResult, error) {
	r := run.TrialResult{ID: in.Trial.Trial.ID, Outcome: run.OutcomeCompleted, Reason: in.Aborted}
	switch {
	case in.Failure != "":
		r.Outcome, r.Reason = run.OutcomeFailed, in.Failure
	case in.Aborted != "":
		r.Outcome = run.OutcomeAborted
	case in.Agent != nil && in.Agent.TimedOut:
		r.Outcome = run.OutcomeTimedOut
	}
	return r, nil
}

// finishInto is a FinishTrial that keeps what it was told in *got and the task queue it
// ran on in *queue, and answers as verifyEcho does.
func finishInto(got *run.VerifyInput, queue *string) func(context.Context, run.VerifyInput) (run.TrialResult, error) {
	return func(ctx context.Context, in run.VerifyInput) (run.TrialResult, error) {
		*got, *queue = in, queueOf(ctx)
		return verifyEcho(ctx, in)
	}
}

// A trial is one activity, RunTrial, on the trial queue beside the run's own
// (run.TrialTaskQueue), named <trial>/run/<attempt>, given the trial with its abort signal
// and its spec's name but not its text (the batch's start has it); an agent that ended on
// its own comes back verified: no other step is taken.
func TestOneStepTrial(t *testing.T) {
	env, written := oneStepEnv(t)
	var seen steps
	env.OnActivity(a.RunTrial, mock.Anything, mock.Anything).Return(func(ctx context.Context, in run.TrialInput) (run.WatchedAgentResult, error) {
		seen.saw(ctx)
		if q := queueOf(ctx); q != run.TrialTaskQueue(strings.TrimSuffix(q, "-trials")) || in.AbortSignal != run.TrialAbortSignal(in.Trial.ID) ||
			len(in.Spec.YAML) != 0 || in.Spec.Name != "t" {
			return run.WatchedAgentResult{}, temporal.NewNonRetryableApplicationError("want a trial without its spec's text on the trial queue, got one on "+q, "bad_input", nil)
		}
		r := run.TrialResult{ID: in.Trial.ID, Outcome: run.OutcomeCompleted, Verdict: "correct"}
		return run.WatchedAgentResult{Result: &r, SetUp: &run.SetUp{Workspace: ws, Queue: hostQ}}, nil
	})
	env.ExecuteWorkflow(ExperimentWorkflow, run.ExperimentInput{RunID: "r", Plan: planOf(3, 2), Spec: run.SpecRef{Name: "t", YAML: []byte("name: t")}})
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, *written, 3)
	for _, r := range *written {
		require.Equal(t, run.OutcomeCompleted, r.Outcome, "%s: %s", r.ID, r.Reason)
	}
	require.ElementsMatch(t, []string{"main/clean/1/run/1", "main/clean/2/run/1", "main/clean/3/run/1"}, seen.ids)
}

// RunTrial answers what it could not finish, and the workflow finishes it where RunTrial
// says the trial lives: a hub that did not start, a verify that failed in the activity, a
// set-up that failed (no host: the shared queue, no workspace).
func TestOneStepFinishesWhatTheActivityDidNot(t *testing.T) {
	for _, c := range []struct {
		name      string
		answer    run.WatchedAgentResult
		err       error
		queue     string
		workspace run.Workspace
		outcome   string
		reason    string
	}{
		{"hub did not start", run.WatchedAgentResult{SetUp: &run.SetUp{Workspace: ws, Queue: hostQ, HubError: "port in use"}}, nil, hostQ, ws, run.OutcomeFailed, "start hub: port in use"},
		{"verify failed in the activity", run.WatchedAgentResult{SetUp: &run.SetUp{Workspace: ws, Queue: hostQ}}, nil, hostQ, ws, run.OutcomeCompleted, ""},
		{"set-up failed", run.WatchedAgentResult{}, temporal.NewNonRetryableApplicationError("no such repository", "bad_input", nil), "", run.Workspace{}, run.OutcomeFailed, "no such repository"},
		{"outlived its bound", run.WatchedAgentResult{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_START_TO_CLOSE, nil), "", run.Workspace{}, run.OutcomeFailed, "run agent: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			env, written := oneStepEnv(t)
			env.OnActivity(a.RunTrial, mock.Anything, mock.Anything).Return(c.answer, c.err)
			var got run.VerifyInput
			var queue string
			env.OnActivity(a.FinishTrial, mock.Anything, mock.Anything).Return(finishInto(&got, &queue))
			env.ExecuteWorkflow(ExperimentWorkflow, run.ExperimentInput{RunID: "r", Plan: planOf(1, 1)})
			require.NoError(t, env.GetWorkflowError())
			require.Len(t, *written, 1)
			r := (*written)[0]
			require.Equal(t, c.outcome, r.Outcome, r.Reason)
			require.Contains(t, r.Reason, c.reason)
			if c.err != nil && c.name == "set-up failed" {
				require.Contains(t, r.Reason, "prepare workspace: ")
			}
			require.Equal(t, c.workspace, got.Workspace)
			if c.queue != "" {
				require.Equal(t, c.queue, queue)
			} else {
				require.NotEqual(t, hostQ, queue)
			}
		})
	}
}

// An aborted trial's RunTrial is cancelled. Cancelled before anything was set up (a
// cancel without details), the trial is aborted with nothing to verify or tear down.
// (The test environment answers a cancel itself, without the activity's details: a
// cancel with them is below, and in a real run in tests/run TestNoProcessLeftBehind.)
func TestOneStepAbortBeforeSetUp(t *testing.T) {
	env, written := oneStepEnv(t)
	env.OnActivity(a.RunTrial, mock.Anything, mock.Anything).After(time.Hour).Return(run.WatchedAgentResult{}, nil)
	env.OnActivity(a.FinishTrial, mock.Anything, mock.Anything).Return(func(ctx context.Context, in run.VerifyInput) (run.TrialResult, error) {
		t.Errorf("FinishTrial after a cancel before the set-up: %+v", in)
		return verifyEcho(ctx, in)
	}).Maybe()
	env.OnActivity(a.Teardown, mock.Anything, mock.Anything).Return(func(ctx context.Context, in run.TeardownInput) error {
		t.Errorf("Teardown after a cancel before the set-up (%s)", in.Reason)
		return nil
	}).Maybe()
	env.RegisterDelayedCallback(func() {
		require.NoError(t, env.SignalWorkflowByID(run.TrialBatchWorkflowID("r", 0), run.TrialAbortSignal("main/clean/1"), "the same failing call 5 times in a row"))
	}, time.Minute)
	env.ExecuteWorkflow(ExperimentWorkflow, run.ExperimentInput{RunID: "r", Plan: planOf(1, 1)})
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, *written, 1)
	r := (*written)[0]
	require.Equal(t, run.OutcomeAborted, r.Outcome, r.Reason)
	require.Equal(t, "the same failing call 5 times in a row", r.Reason)
}

// A RunTrial cancelled after its set-up names the set-up in its cancel's details; the
// workflow finishes the trial there, on that worker's queue, with that workspace.
func TestOneStepCancelWithDetails(t *testing.T) {
	env, written := oneStepEnv(t)
	env.OnActivity(a.RunTrial, mock.Anything, mock.Anything).Return(run.WatchedAgentResult{},
		temporal.NewCanceledError(run.WatchedAgentResult{Agent: run.AgentResult{ExitCode: -1}, SetUp: &run.SetUp{Workspace: ws, Queue: hostQ}}))
	var got run.VerifyInput
	var queue string
	env.OnActivity(a.FinishTrial, mock.Anything, mock.Anything).Return(finishInto(&got, &queue))
	env.ExecuteWorkflow(ExperimentWorkflow, run.ExperimentInput{RunID: "r", Plan: planOf(1, 1)})
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, *written, 1)
	require.Equal(t, hostQ, queue)
	require.Equal(t, ws, got.Workspace)
	require.NotNil(t, got.Agent)
	require.Equal(t, -1, got.Agent.ExitCode)
}

// A lost worker (RunTrial's heartbeat lost, twice) runs the trial again as the next
// attempt, a new RunTrial; the other trial is not touched.
func TestOneStepLostWorkerRunsAgain(t *testing.T) {
	env, written := oneStepEnv(t)
	var seen steps
	var mu sync.Mutex
	runs := map[string]int{}
	env.OnActivity(a.RunTrial, mock.Anything, mock.Anything).Return(func(ctx context.Context, in run.TrialInput) (run.WatchedAgentResult, error) {
		seen.saw(ctx)
		mu.Lock()
		runs[in.Trial.ID]++
		n := runs[in.Trial.ID]
		mu.Unlock()
		switch {
		case in.Trial.ID == "main/clean/1" && n == 1:
			return run.WatchedAgentResult{}, temporal.NewApplicationError("heartbeat failed", activities.ErrHeartbeatLost)
		case in.Trial.ID == "main/clean/1" && n == 2:
			return run.WatchedAgentResult{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil)
		}
		r := run.TrialResult{ID: in.Trial.ID, Outcome: run.OutcomeCompleted, Verdict: "correct"}
		return run.WatchedAgentResult{Result: &r, SetUp: &run.SetUp{Workspace: ws, Queue: hostQ}}, nil
	})
	env.ExecuteWorkflow(ExperimentWorkflow, run.ExperimentInput{RunID: "r", Plan: planOf(2, 2)})
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, *written, 2)
	for _, r := range *written {
		require.Equal(t, run.OutcomeCompleted, r.Outcome, "%s: %s", r.ID, r.Reason)
	}
	require.Equal(t, map[string]int{"main/clean/1": 3, "main/clean/2": 1}, runs)
	require.ElementsMatch(t, []string{"main/clean/1/run/1", "main/clean/1/run/2", "main/clean/1/run/3", "main/clean/2/run/1"}, seen.ids)
}
