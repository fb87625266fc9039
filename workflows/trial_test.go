package workflows

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/suite"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/crashwall/chaos/spec"
)

// trialEnv is what both trial suites share: a test workflow environment a test, with the
// activities registered (mocked by each test) and their expectations checked after it.
type trialEnv struct {
	suite.Suite
	testsuite.WorkflowTestSuite
	env *testsuite.TestWorkflowEnvironment
}

func (s *trialEnv) SetupTest() {
	s.env = s.NewTestWorkflowEnvironment()
	s.env.RegisterActivity(a)
}

func (s *trialEnv) AfterTest(_, _ string) { s.env.AssertExpectations(s.T()) }

// run runs the trial workflow to its end and returns its result; a workflow that ends
// in an error fails the test (msgAndArgs say why it must not).
func (s *trialEnv) run(in TrialInput, msgAndArgs ...any) TrialResult {
	s.env.ExecuteWorkflow(TrialWorkflow, in)
	s.True(s.env.IsWorkflowCompleted())
	s.Require().NoError(s.env.GetWorkflowError(), msgAndArgs...)
	var r TrialResult
	s.NoError(s.env.GetWorkflowResult(&r))
	return r
}

// runAborted runs the trial (its agent mocked to run for an hour of workflow time) with an
// abort signal two minutes in, and checks that the abort cancelled the agent and that
// the trial was verified as aborted.
func (s *trialEnv) runAborted(in TrialInput) TrialResult {
	var verified VerifyInput
	s.env.OnActivity(a.FinishTrial, mock.Anything, mock.Anything).Return(finishInto(&verified, nil))
	s.env.RegisterDelayedCallback(func() { s.env.SignalWorkflow(SignalAbort, "40 calls: over the limit of 40") }, 2*time.Minute)
	start := s.env.Now()

	r := s.run(in)
	s.Equal(OutcomeAborted, r.Outcome)
	// The agent did not finish on its own: it was cancelled at the abort, long before its hour.
	s.Less(s.env.Now().Sub(start), time.Hour)
	s.Equal("40 calls: over the limit of 40", verified.Aborted)
	s.Equal("aborted: 40 calls: over the limit of 40", verified.CloseReason)
	return r
}

// trialSuite is the trial in a worker session (trial.go).
type trialSuite struct{ trialEnv }

func TestTrialWorkflow(t *testing.T) { suite.Run(t, new(trialSuite)) }

func (s *trialSuite) SetupTest() {
	s.trialEnv.SetupTest()
	s.env.SetWorkerOptions(worker.Options{EnableSessionWorker: true})
}

func trialIn() TrialInput {
	return TrialInput{RunID: "r1", OutDir: "/tmp/out", Trial: spec.TrialPlan{ID: "main/clean/1", Cell: "main", Condition: "clean", Rep: 1, Seed: 42}}
}

var ws = Workspace{Dir: "/tmp/sandbox", TrialDir: "/tmp/out/trials/main/clean/1"}

// verifyEcho returns a result that echoes what Verify was told, so tests can see it.
func verifyEcho(_ context.Context, in VerifyInput) (TrialResult, error) {
	r := TrialResult{ID: in.Trial.Trial.ID, Outcome: OutcomeCompleted, Reason: in.Aborted}
	switch {
	case in.Failure != "":
		r.Outcome, r.Reason = OutcomeFailed, in.Failure
	case in.Aborted != "":
		r.Outcome = OutcomeAborted
	case in.Agent != nil && in.Agent.TimedOut:
		r.Outcome = OutcomeTimedOut
	}
	return r, nil
}

// finishInto is a FinishTrial that keeps what it was told in *got and the task queue it
// ran on in *queue (either may be nil), and answers as verifyEcho does.
func finishInto(got *VerifyInput, queue *string) func(context.Context, VerifyInput) (TrialResult, error) {
	return func(ctx context.Context, in VerifyInput) (TrialResult, error) {
		if got != nil {
			*got = in
		}
		if queue != nil {
			*queue = queueOf(ctx)
		}
		return verifyEcho(ctx, in)
	}
}

func (s *trialSuite) TestCompletes() {
	s.env.OnActivity(a.SetUpTrial, mock.Anything, mock.Anything).Return(SetUp{Workspace: ws, Hub: HubInfo{URL: "http://127.0.0.1:1"}}, nil).Once()
	var agentIn AgentInput
	s.env.OnActivity(a.RunAgent, mock.Anything, mock.Anything).Return(func(_ context.Context, in AgentInput) (AgentResult, error) {
		agentIn = in
		return AgentResult{ExitCode: 0}, nil
	}).Once()
	s.env.OnActivity(a.WatchEvents, mock.Anything, mock.Anything).Return(WatchResult{}, nil).Maybe()
	var finish VerifyInput
	s.env.OnActivity(a.FinishTrial, mock.Anything, mock.Anything).Return(finishInto(&finish, nil)).Once()
	// FinishTrial tore the trial down: no Teardown of its own.

	r := s.run(trialIn())
	s.Equal(OutcomeCompleted, r.Outcome)
	s.Equal("http://127.0.0.1:1", agentIn.Hub.URL)
	s.Equal(ws, agentIn.Workspace)
	s.Equal("agent exited", finish.CloseReason)
	s.Equal(ws, finish.Workspace)
}

// An abort signal at a mocked time cancels the agent; the trial is verified as aborted
// and torn down.
func (s *trialSuite) TestAbortSignalCancelsAgent() {
	s.env.OnActivity(a.SetUpTrial, mock.Anything, mock.Anything).Return(SetUp{Workspace: ws}, nil)
	// The agent would run for an hour of workflow time; the abort comes after two minutes.
	s.env.OnActivity(a.RunAgent, mock.Anything, mock.Anything).After(time.Hour).Return(AgentResult{ExitCode: 0}, nil)
	s.env.OnActivity(a.WatchEvents, mock.Anything, mock.Anything).After(time.Hour).Return(WatchResult{}, nil)
	r := s.runAborted(trialIn())
	s.Equal("40 calls: over the limit of 40", r.Reason)
}

// Cancelling the trial workflow (its run was aborted) still verifies and tears down.
func (s *trialSuite) TestCancelStillTearsDown() {
	s.env.OnActivity(a.SetUpTrial, mock.Anything, mock.Anything).Return(SetUp{Workspace: ws}, nil)
	s.env.OnActivity(a.RunAgent, mock.Anything, mock.Anything).After(time.Hour).Return(AgentResult{}, nil)
	s.env.OnActivity(a.WatchEvents, mock.Anything, mock.Anything).After(time.Hour).Return(WatchResult{}, nil)
	tornDown := false
	s.env.OnActivity(a.FinishTrial, mock.Anything, mock.Anything).Return(func(ctx context.Context, in VerifyInput) (TrialResult, error) {
		tornDown = true
		return verifyEcho(ctx, in)
	})
	s.env.RegisterDelayedCallback(func() { s.env.CancelWorkflow() }, time.Minute)

	s.env.ExecuteWorkflow(TrialWorkflow, trialIn())
	s.True(s.env.IsWorkflowCompleted())
	s.True(tornDown, "teardown did not run after a cancel")
}

// A setup activity that fails once is retried and the trial goes on.
func (s *trialSuite) TestActivityFailsThenSucceeds() {
	s.env.OnActivity(a.SetUpTrial, mock.Anything, mock.Anything).Return(SetUp{}, errors.New("disk busy")).Once()
	s.env.OnActivity(a.SetUpTrial, mock.Anything, mock.Anything).Return(SetUp{Workspace: ws}, nil).Once()
	s.env.OnActivity(a.RunAgent, mock.Anything, mock.Anything).Return(AgentResult{}, nil).Once()
	s.env.OnActivity(a.WatchEvents, mock.Anything, mock.Anything).Return(WatchResult{}, nil).Maybe()
	s.env.OnActivity(a.FinishTrial, mock.Anything, mock.Anything).Return(verifyEcho).Once()

	r := s.run(trialIn())
	s.Equal(OutcomeCompleted, r.Outcome)
}

// A hub that never starts (SetUpTrial's last attempt hands its error back with the
// workspace) ends the trial as failed (no verdict), verified and torn down there.
func (s *trialSuite) TestHubNeverStarts() {
	s.env.OnActivity(a.SetUpTrial, mock.Anything, mock.Anything).Return(SetUp{Workspace: ws, HubError: "no port"}, nil).Once()
	var finish VerifyInput
	s.env.OnActivity(a.FinishTrial, mock.Anything, mock.Anything).Return(finishInto(&finish, nil)).Once()

	r := s.run(trialIn())
	s.Equal(OutcomeFailed, r.Outcome)
	s.Contains(r.Reason, "start hub")
	s.Contains(r.Reason, "no port")
	s.Equal(ws, finish.Workspace)
	s.Equal("start hub failed", finish.CloseReason)
}

// A FinishTrial that keeps failing leaves the teardown to the workflow, which runs it.
func (s *trialSuite) TestFinishFailsThenTeardown() {
	s.env.OnActivity(a.SetUpTrial, mock.Anything, mock.Anything).Return(SetUp{Workspace: ws}, nil).Once()
	s.env.OnActivity(a.RunAgent, mock.Anything, mock.Anything).Return(AgentResult{}, nil).Once()
	s.env.OnActivity(a.WatchEvents, mock.Anything, mock.Anything).Return(WatchResult{}, nil).Maybe()
	s.env.OnActivity(a.FinishTrial, mock.Anything, mock.Anything).Return(TrialResult{}, errors.New("disk full")).Times(3)
	var teardown TeardownInput
	s.env.OnActivity(a.Teardown, mock.Anything, mock.Anything).Return(func(_ context.Context, in TeardownInput) error {
		teardown = in
		return nil
	}).Once()

	r := s.run(trialIn())
	s.Equal(OutcomeFailed, r.Outcome)
	s.Contains(r.Reason, "disk full")
	s.Equal(ws, teardown.Workspace)
	s.Equal("agent exited", teardown.Reason)
}
