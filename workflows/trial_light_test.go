package workflows

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/suite"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/crashwall/chaos/activities"
)

// The light trial (trial_light.go): no session; the steps after SetUpTrial on the queue
// it names.
type lightSuite struct{ trialEnv }

func TestLightTrialWorkflow(t *testing.T) { suite.Run(t, new(lightSuite)) }

func lightIn() TrialInput {
	in := trialIn()
	in.Light = true
	return in
}

const hostQ = "chaos@host-1-abc"

// queueOf is the task queue an activity was scheduled on.
func queueOf(ctx context.Context) string { return activity.GetInfo(ctx).TaskQueue }

func (s *lightSuite) TestCompletesOnTheHostQueue() {
	var setupQ, agentQ, finishQ string
	s.env.OnActivity(a.SetUpTrial, mock.Anything, mock.Anything).Return(func(ctx context.Context, in TrialInput) (SetUp, error) {
		setupQ = queueOf(ctx)
		s.True(in.Light)
		return SetUp{Workspace: ws, Hub: HubInfo{URL: "http://127.0.0.1:1"}, Queue: hostQ}, nil
	}).Once()
	var agentIn AgentInput
	s.env.OnActivity(a.RunWatchedAgent, mock.Anything, mock.Anything).Return(func(ctx context.Context, in AgentInput) (WatchedAgentResult, error) {
		agentQ, agentIn = queueOf(ctx), in
		return WatchedAgentResult{Agent: AgentResult{ExitCode: 0}}, nil // not finished there: Verify failed
	}).Once()
	var finish VerifyInput
	s.env.OnActivity(a.FinishTrial, mock.Anything, mock.Anything).Return(finishInto(&finish, &finishQ)).Once()
	// No session, no RunAgent, no WatchEvents, no Teardown of its own (FinishTrial did it):
	// the mocks' expectations fail the test on any other activity.

	r := s.run(lightIn())
	s.Equal(OutcomeCompleted, r.Outcome)
	s.NotEqual(hostQ, setupQ, "SetUpTrial runs on the shared queue")
	s.Equal(hostQ, agentQ)
	s.Equal(hostQ, finishQ)
	s.Equal("http://127.0.0.1:1", agentIn.Hub.URL)
	s.True(agentIn.Finish)
	s.Equal(ws, finish.Workspace)
	s.Equal("agent exited", finish.CloseReason)
}

// An agent whose heartbeat was lost (its worker died or was cut off): the attempt ends
// with ErrWorkerLost for the experiment to run again, and nothing else runs on the dead
// worker's queue.
func (s *lightSuite) TestLostWorkerIsRetried() {
	s.env.OnActivity(a.SetUpTrial, mock.Anything, mock.Anything).Return(SetUp{Workspace: ws, Queue: hostQ}, nil).Once()
	s.env.OnActivity(a.RunWatchedAgent, mock.Anything, mock.Anything).Return(WatchedAgentResult{},
		temporal.NewApplicationError("heartbeat failed", activities.ErrHeartbeatLost)).Once()

	s.env.ExecuteWorkflow(TrialWorkflow, lightIn())
	s.True(s.env.IsWorkflowCompleted())
	var app *temporal.ApplicationError
	s.Require().True(errors.As(s.env.GetWorkflowError(), &app), "want an application error, got %v", s.env.GetWorkflowError())
	s.Equal(ErrWorkerLost, app.Type())
}

// A worker with no free trial slot: ErrWorkerLost too (as a session that was not created).
func (s *lightSuite) TestBusyWorkerIsRetried() {
	s.env.OnActivity(a.SetUpTrial, mock.Anything, mock.Anything).Return(SetUp{},
		temporal.NewNonRetryableApplicationError("busy", activities.ErrWorkerBusy, nil)).Once()

	s.env.ExecuteWorkflow(TrialWorkflow, lightIn())
	var app *temporal.ApplicationError
	s.Require().True(errors.As(s.env.GetWorkflowError(), &app), "want an application error, got %v", s.env.GetWorkflowError())
	s.Equal(ErrWorkerLost, app.Type())
}

// An abort signal cancels the agent; the trial is verified as aborted on the host queue.
func (s *lightSuite) TestAbortSignalCancelsAgent() {
	s.env.OnActivity(a.SetUpTrial, mock.Anything, mock.Anything).Return(SetUp{Workspace: ws, Queue: hostQ}, nil)
	s.env.OnActivity(a.RunWatchedAgent, mock.Anything, mock.Anything).After(time.Hour).Return(WatchedAgentResult{}, nil)
	s.runAborted(lightIn())
}

// Cancelling the trial workflow (its run was aborted) still verifies and tears down.
func (s *lightSuite) TestCancelStillTearsDown() {
	s.env.OnActivity(a.SetUpTrial, mock.Anything, mock.Anything).Return(SetUp{Workspace: ws, Queue: hostQ}, nil)
	s.env.OnActivity(a.RunWatchedAgent, mock.Anything, mock.Anything).After(time.Hour).Return(WatchedAgentResult{}, nil)
	var finishQ string
	s.env.OnActivity(a.FinishTrial, mock.Anything, mock.Anything).Return(finishInto(nil, &finishQ))
	s.env.RegisterDelayedCallback(func() { s.env.CancelWorkflow() }, time.Minute)

	s.env.ExecuteWorkflow(TrialWorkflow, lightIn())
	s.True(s.env.IsWorkflowCompleted())
	s.Equal(hostQ, finishQ, "the cancelled trial was not verified and torn down on its host")
}

// A FinishTrial that keeps failing leaves the teardown to the workflow, on the host queue.
func (s *lightSuite) TestFinishFailsThenTeardown() {
	s.env.OnActivity(a.SetUpTrial, mock.Anything, mock.Anything).Return(SetUp{Workspace: ws, Queue: hostQ}, nil).Once()
	s.env.OnActivity(a.RunWatchedAgent, mock.Anything, mock.Anything).Return(WatchedAgentResult{}, nil).Once()
	s.env.OnActivity(a.FinishTrial, mock.Anything, mock.Anything).Return(TrialResult{}, errors.New("disk full")).Times(3)
	var teardownQ string
	s.env.OnActivity(a.Teardown, mock.Anything, mock.Anything).Return(func(ctx context.Context, in TeardownInput) error {
		teardownQ = queueOf(ctx)
		return nil
	}).Once()

	r := s.run(lightIn())
	s.Equal(OutcomeFailed, r.Outcome)
	s.Contains(r.Reason, "disk full")
	s.Equal(hostQ, teardownQ)
}

// An agent that ended on its own is verified and torn down in its own activity: two
// activities in all, and its verdict is the trial's.
func (s *lightSuite) TestFinishedInTheAgentActivity() {
	s.env.OnActivity(a.SetUpTrial, mock.Anything, mock.Anything).Return(SetUp{Workspace: ws, Queue: hostQ}, nil).Once()
	s.env.OnActivity(a.RunWatchedAgent, mock.Anything, mock.Anything).Return(WatchedAgentResult{
		Agent: AgentResult{ExitCode: 0}, Result: &TrialResult{ID: "main/clean/1", Outcome: OutcomeCompleted, Reason: "verified there"}}, nil).Once()
	// No FinishTrial, no Teardown: the expectations fail the test on any other activity.

	r := s.run(lightIn())
	s.Equal(OutcomeCompleted, r.Outcome)
	s.Equal("verified there", r.Reason)
}

// The watcher's abort in the agent's result (its signal not in yet) makes the trial
// aborted, verified by FinishTrial.
func (s *lightSuite) TestWatcherAbortInResult() {
	s.env.OnActivity(a.SetUpTrial, mock.Anything, mock.Anything).Return(SetUp{Workspace: ws, Queue: hostQ}, nil).Once()
	s.env.OnActivity(a.RunWatchedAgent, mock.Anything, mock.Anything).Return(WatchedAgentResult{Abort: "too many calls"}, nil).Once()
	var verified VerifyInput
	s.env.OnActivity(a.FinishTrial, mock.Anything, mock.Anything).Return(finishInto(&verified, nil)).Once()

	r := s.run(lightIn())
	s.Equal(OutcomeAborted, r.Outcome)
	s.Equal("too many calls", verified.Aborted)
	s.Equal("aborted: too many calls", verified.CloseReason)
}

// A trial aborted while its worker is lost (here FinishTrial's, after the abort cancelled
// the agent; stopping a starved agent can also outlast its heartbeat timeout): the trial is
// aborted and its teardown tried, never ErrWorkerLost, which would make the experiment start
// its agent again after the abort (seen at 1,000 trials in flight).
func (s *lightSuite) TestAbortThenLostIsAborted() {
	s.env.OnActivity(a.SetUpTrial, mock.Anything, mock.Anything).Return(SetUp{Workspace: ws, Queue: hostQ}, nil).Once()
	s.env.OnActivity(a.RunWatchedAgent, mock.Anything, mock.Anything).After(time.Hour).Return(WatchedAgentResult{}, nil)
	s.env.OnActivity(a.FinishTrial, mock.Anything, mock.Anything).Return(TrialResult{},
		temporal.NewNonRetryableApplicationError("no slot", activities.ErrWorkerBusy, nil)).Once()
	var teardown TeardownInput
	s.env.OnActivity(a.Teardown, mock.Anything, mock.Anything).Return(func(ctx context.Context, in TeardownInput) error {
		teardown = in
		return nil
	}).Once()
	s.env.RegisterDelayedCallback(func() { s.env.SignalWorkflow(SignalAbort, "stopped by a person") }, time.Minute)

	r := s.run(lightIn(), "an aborted trial must not end with ErrWorkerLost")
	s.Equal(OutcomeAborted, r.Outcome)
	s.Contains(r.Reason, "stopped by a person")
	s.Contains(r.Reason, "lost during verify")
	s.Equal("aborted: stopped by a person", teardown.Reason)
}

// With LocalSetUp, SetUpTrial is a local activity (no activity task of its own) and the
// agent runs on the queue it names, as before.
func (s *lightSuite) TestLocalSetUp() {
	local := false
	s.env.OnActivity(a.SetUpTrial, mock.Anything, mock.Anything).Return(func(ctx context.Context, in TrialInput) (SetUp, error) {
		local = activity.GetInfo(ctx).IsLocalActivity
		return SetUp{Workspace: ws, Hub: HubInfo{URL: "http://127.0.0.1:1"}, Queue: hostQ}, nil
	}).Once()
	var agentQ string
	s.env.OnActivity(a.RunWatchedAgent, mock.Anything, mock.Anything).Return(func(ctx context.Context, in AgentInput) (WatchedAgentResult, error) {
		agentQ = queueOf(ctx)
		r := TrialResult{ID: in.Trial.Trial.ID, Outcome: OutcomeCompleted}
		return WatchedAgentResult{Result: &r}, nil
	}).Once()

	in := lightIn()
	in.LocalSetUp = true
	s.env.ExecuteWorkflow(TrialWorkflow, in)
	s.NoError(s.env.GetWorkflowError())
	var r TrialResult
	s.NoError(s.env.GetWorkflowResult(&r))
	s.Equal(OutcomeCompleted, r.Outcome)
	s.True(local, "SetUpTrial ran as a local activity")
	s.Equal(hostQ, agentQ)
}

// A busy worker met by a local SetUpTrial: ErrWorkerLost, as with a scheduled one.
func (s *lightSuite) TestLocalSetUpBusyWorkerIsRetried() {
	s.env.OnActivity(a.SetUpTrial, mock.Anything, mock.Anything).Return(SetUp{},
		temporal.NewNonRetryableApplicationError("busy", activities.ErrWorkerBusy, nil)).Once()

	in := lightIn()
	in.LocalSetUp = true
	s.env.ExecuteWorkflow(TrialWorkflow, in)
	var app *temporal.ApplicationError
	s.Require().True(errors.As(s.env.GetWorkflowError(), &app), "want an application error, got %v", s.env.GetWorkflowError())
	s.Equal(ErrWorkerLost, app.Type())
}
