package workflows

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/crashwall/chaos/activities"
)

// inlineEnv is an experiment whose trials run inline (trial_inline.go) in two steps
// (SetUpTrial, then RunWatchedAgent: runs started before oneStepTrials), with every
// activity mocked but the trial's own steps, which the test gives. TrialWorkflow is not
// registered: a trial started as a child fails the run.
func inlineEnv(t *testing.T) (*testsuite.TestWorkflowEnvironment, *[]TrialResult) {
	env, written := oneStepEnv(t)
	env.OnGetVersion(oneStepTrials, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	return env, written
}

// oneStepEnv is inlineEnv for a run started since oneStepTrials: a trial is RunTrial.
func oneStepEnv(t *testing.T) (*testsuite.TestWorkflowEnvironment, *[]TrialResult) {
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestWorkflowEnvironment()
	env.RegisterActivity(a)
	var mu sync.Mutex
	var written []TrialResult
	env.OnActivity(a.RecordResult, mock.Anything, mock.Anything).Return(func(_ context.Context, in RecordResultInput) error {
		mu.Lock()
		defer mu.Unlock()
		written = append(written, in.Result)
		return nil
	}).Maybe()
	env.OnActivity(a.Aggregate, mock.Anything, mock.Anything).Return(Summary{}, nil)
	return env, &written
}

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

func (s *steps) has(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range s.ids {
		if x == id {
			return true
		}
	}
	return false
}

// A new run's trials run inline: no child workflow; the set-up on the shared queue, the
// agent on the queue it names; each step's activity id is the trial's, the step's and the
// attempt's; the agent's activity is told the trial's own abort signal.
func TestInlineTrialSteps(t *testing.T) {
	env, written := inlineEnv(t)
	var seen steps
	var setupQ []string
	var mu sync.Mutex
	env.OnActivity(a.SetUpTrial, mock.Anything, mock.Anything).Return(func(ctx context.Context, in TrialInput) (SetUp, error) {
		seen.saw(ctx)
		mu.Lock()
		setupQ = append(setupQ, queueOf(ctx))
		mu.Unlock()
		if !in.Light || in.AbortSignal != TrialAbortSignal(in.Trial.ID) || string(in.Spec.YAML) != "name: t" {
			return SetUp{}, temporal.NewNonRetryableApplicationError("want a light inline trial with its spec", "bad_input", nil)
		}
		return SetUp{Workspace: ws, Queue: hostQ}, nil
	})
	env.OnActivity(a.RunWatchedAgent, mock.Anything, mock.Anything).Return(func(ctx context.Context, in AgentInput) (WatchedAgentResult, error) {
		seen.saw(ctx)
		// The spec's text stays out of the history at the agent's step (the host has it).
		if queueOf(ctx) != hostQ || in.Trial.AbortSignal != "abort/"+in.Trial.Trial.ID || len(in.Trial.Spec.YAML) != 0 || in.Trial.Spec.Name != "t" {
			return WatchedAgentResult{}, temporal.NewNonRetryableApplicationError("agent on "+queueOf(ctx)+" with signal "+in.Trial.AbortSignal, "bad_input", nil)
		}
		r := TrialResult{ID: in.Trial.Trial.ID, Outcome: OutcomeCompleted, Verdict: "correct"}
		return WatchedAgentResult{Result: &r}, nil
	})
	env.ExecuteWorkflow(ExperimentWorkflow, ExperimentInput{RunID: "r", Plan: planOf(3, 2), Spec: SpecRef{Name: "t", YAML: []byte("name: t")}})
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, *written, 3)
	for _, r := range *written {
		require.Equal(t, OutcomeCompleted, r.Outcome, "%s: %s", r.ID, r.Reason)
	}
	for i := 1; i <= 3; i++ {
		for _, step := range []string{"set-up", "agent"} {
			id := "main/clean/" + string(rune('0'+i)) + "/" + step + "/1"
			require.True(t, seen.has(id), "no activity %s in %v", id, seen.ids)
		}
	}
	for _, q := range setupQ {
		require.NotEqual(t, hostQ, q, "the set-up runs on the shared queue")
	}
}

// A lost worker's attempt (its agent's heartbeat lost) is run again from a new set-up,
// as the attempt after; the other trial is not touched.
func TestInlineLostWorkerRunsAgain(t *testing.T) {
	env, written := inlineEnv(t)
	var seen steps
	var mu sync.Mutex
	agentRuns := map[string]int{}
	env.OnActivity(a.SetUpTrial, mock.Anything, mock.Anything).Return(func(ctx context.Context, in TrialInput) (SetUp, error) {
		seen.saw(ctx)
		return SetUp{Workspace: ws, Queue: hostQ}, nil
	})
	env.OnActivity(a.RunWatchedAgent, mock.Anything, mock.Anything).Return(func(ctx context.Context, in AgentInput) (WatchedAgentResult, error) {
		seen.saw(ctx)
		mu.Lock()
		agentRuns[in.Trial.Trial.ID]++
		n := agentRuns[in.Trial.Trial.ID]
		mu.Unlock()
		if in.Trial.Trial.ID == "main/clean/1" && n == 1 {
			return WatchedAgentResult{}, temporal.NewApplicationError("heartbeat failed", activities.ErrHeartbeatLost)
		}
		r := TrialResult{ID: in.Trial.Trial.ID, Outcome: OutcomeCompleted, Verdict: "correct"}
		return WatchedAgentResult{Result: &r}, nil
	})
	env.OnActivity(a.Teardown, mock.Anything, mock.Anything).Return(nil).Maybe()
	env.ExecuteWorkflow(ExperimentWorkflow, ExperimentInput{RunID: "r", Plan: planOf(2, 2)})
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, *written, 2)
	for _, r := range *written {
		require.Equal(t, OutcomeCompleted, r.Outcome, "%s: %s", r.ID, r.Reason)
	}
	require.Equal(t, map[string]int{"main/clean/1": 2, "main/clean/2": 1}, agentRuns)
	for _, id := range []string{"main/clean/1/set-up/1", "main/clean/1/agent/1", "main/clean/1/set-up/2", "main/clean/1/agent/2", "main/clean/2/agent/1"} {
		require.True(t, seen.has(id), "no activity %s in %v", id, seen.ids)
	}
	require.False(t, seen.has("main/clean/2/set-up/2"), "the other trial ran again: %v", seen.ids)
}

// A worker lost on every attempt: ten attempts (the child's retry policy), then the trial
// is failed with the last loss as its reason, and the run goes on.
func TestInlineLostEveryTimeFails(t *testing.T) {
	env, written := inlineEnv(t)
	agentRuns := 0
	env.OnActivity(a.SetUpTrial, mock.Anything, mock.Anything).Return(SetUp{Workspace: ws, Queue: hostQ}, nil)
	env.OnActivity(a.RunWatchedAgent, mock.Anything, mock.Anything).Return(func(ctx context.Context, in AgentInput) (WatchedAgentResult, error) {
		agentRuns++
		return WatchedAgentResult{}, temporal.NewApplicationError("heartbeat failed", activities.ErrHeartbeatLost)
	})
	env.ExecuteWorkflow(ExperimentWorkflow, ExperimentInput{RunID: "r", Plan: planOf(1, 1)})
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, 10, agentRuns)
	require.Len(t, *written, 1)
	r := (*written)[0]
	require.Equal(t, OutcomeFailed, r.Outcome)
	require.Contains(t, r.Reason, "the worker running the trial was lost during run agent")
}

// The trial's own abort signal (what its watcher sends) aborts that trial alone: its agent
// is cancelled and the trial verified as aborted on its host; the run is not aborted and
// its other trial completes.
func TestInlineTrialAbortSignal(t *testing.T) {
	env, written := inlineEnv(t)
	env.OnActivity(a.SetUpTrial, mock.Anything, mock.Anything).Return(SetUp{Workspace: ws, Queue: hostQ}, nil)
	trial := func(id string) any {
		return mock.MatchedBy(func(in AgentInput) bool { return in.Trial.Trial.ID == id })
	}
	// Trial 1's agent would run for an hour: until it is cancelled.
	env.OnActivity(a.RunWatchedAgent, mock.Anything, trial("main/clean/1")).After(time.Hour).Return(WatchedAgentResult{}, nil)
	done := TrialResult{ID: "main/clean/2", Outcome: OutcomeCompleted, Verdict: "correct"}
	env.OnActivity(a.RunWatchedAgent, mock.Anything, trial("main/clean/2")).Return(WatchedAgentResult{Result: &done}, nil)
	var mu sync.Mutex
	var finished []VerifyInput
	env.OnActivity(a.FinishTrial, mock.Anything, mock.Anything).Return(func(ctx context.Context, in VerifyInput) (TrialResult, error) {
		mu.Lock()
		finished = append(finished, in)
		mu.Unlock()
		if queueOf(ctx) != hostQ {
			return TrialResult{}, temporal.NewNonRetryableApplicationError("finished on "+queueOf(ctx), "bad_input", nil)
		}
		return verifyEcho(ctx, in)
	})
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(TrialAbortSignal("main/clean/1"), "the same failing call 5 times in a row")
	}, time.Minute)
	env.ExecuteWorkflow(ExperimentWorkflow, ExperimentInput{RunID: "r", Plan: planOf(2, 2)})
	require.NoError(t, env.GetWorkflowError())
	var res ExperimentResult
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Empty(t, res.Aborted, "a trial's abort is not the run's")
	require.Len(t, finished, 1)
	require.Equal(t, "main/clean/1", finished[0].Trial.Trial.ID)
	require.Equal(t, "the same failing call 5 times in a row", finished[0].Aborted)
	outcomes := map[string]string{}
	for _, r := range *written {
		outcomes[r.ID] = r.Outcome + " " + r.Reason
	}
	require.True(t, strings.HasPrefix(outcomes["main/clean/2"], OutcomeCompleted), "%v", outcomes)
	require.True(t, strings.HasPrefix(outcomes["main/clean/1"], OutcomeAborted), "%v", outcomes)
}
