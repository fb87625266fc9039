// Package workflows holds the Temporal workflows of a run: ExperimentWorkflow runs the
// planned trials as TrialWorkflow children, N at a time; TrialWorkflow runs one trial's
// activities in one worker session. Workflow code is deterministic and does no I/O.
package workflows

import (
	"errors"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/crashwall/chaos/activities"
	"github.com/crashwall/chaos/run"
)

// The trial's activities, through a nil pointer: only their names and types are used.
var a *activities.Activities

// Timeouts of a trial's activities (the agent's own timeout is in the spec).
const (
	setupTimeout     = 2 * time.Minute
	defaultAgentTime = 5 * time.Minute
)

// ErrWorkerLost is the error type a trial ends with when the worker that held its session
// is gone: the experiment's retry policy runs the trial again, from a fresh folder.
const ErrWorkerLost = "worker_lost"

// watcherNotAwaited is the workflow.GetVersion change id of not waiting for WatchEvents
// to acknowledge its cancel once the agent is done.
const watcherNotAwaited = "watcher-not-awaited"

// retryOnLostWorker is the workflow.GetVersion change id of ending an attempt whose worker
// was lost with ErrWorkerLost (before: the trial was recorded as failed).
const retryOnLostWorker = "retry-trial-on-lost-worker"

// cancelledIsAborted is the workflow.GetVersion change id of recording a trial whose run
// was cancelled as aborted even when its agent ended first.
const cancelledIsAborted = "cancelled-is-aborted"

// retryOnNoSession is the workflow.GetVersion change id of ending an attempt that got no
// worker session with ErrWorkerLost, or as aborted when the run was cancelled meanwhile
// (before: the trial was recorded as failed).
const retryOnNoSession = "retry-trial-on-no-session"

// foldedSteps is the workflow.GetVersion change id of running the trial's quick steps two
// by two: SetUpTrial (PrepareWorkspace + StartHub) and FinishTrial (Verify + Teardown),
// one round trip through the server each (before: four).
const foldedSteps = "folded-trial-steps"

// TrialWorkflow runs one trial:
//
//	session ─ SetUpTrial ─┬─ RunAgent ────┬─ FinishTrial
//	                      └─ WatchEvents ─┘
//	signal "abort" (from the watcher or a person) ──> cancel RunAgent
//
// SetUpTrial is PrepareWorkspace and StartHub, FinishTrial is Verify and Teardown (runs
// started before foldedSteps ran the four one by one). All activities run in one worker
// session, so the hub, the agent and the workspace are on the same host; they stay
// activities (not local ones, which run wherever the workflow task does). Teardown runs
// in a disconnected context, also after a cancel, unless FinishTrial did it.
func TrialWorkflow(ctx workflow.Context, in TrialInput) (TrialResult, error) {
	if in.Light {
		return lightTrialWorkflow(ctx, in) // trial_light.go
	}
	logger := workflow.GetLogger(ctx)
	result := TrialResult{ID: in.Trial.ID, Cell: in.Trial.Cell, Condition: in.Trial.Condition, Rep: in.Trial.Rep, Seed: in.Trial.Seed}

	agentTimeout := defaultAgentTime
	if in.AgentTimeout > 0 {
		agentTimeout = in.AgentTimeout
	}
	// A worker starved of CPU answers late; only one silent for this long is lost.
	heartbeatTimeout := in.HeartbeatTimeout
	if heartbeatTimeout <= 0 {
		heartbeatTimeout = run.HeartbeatTimeoutFor(agentTimeout)
	}
	sess, err := workflow.CreateSession(ctx, &workflow.SessionOptions{
		CreationTimeout:  time.Minute,
		ExecutionTimeout: 2*agentTimeout + 2*setupTimeout,
		HeartbeatTimeout: heartbeatTimeout,
	})
	if err != nil {
		if workflow.GetVersion(ctx, retryOnNoSession, workflow.DefaultVersion, 1) == 1 {
			if ctx.Err() != nil {
				result.Outcome, result.Reason = OutcomeAborted, "the run was cancelled before the trial started"
				return result, nil
			}
			// No worker took the session in time (all busy, or starved): not the trial's
			// fault; the experiment's retry runs it again.
			return TrialResult{}, temporal.NewApplicationError("no worker session: "+err.Error(), ErrWorkerLost)
		}
		result.Outcome, result.Reason = OutcomeFailed, "no worker session: "+err.Error()
		return result, nil
	}
	defer workflow.CompleteSession(sess)
	folded := workflow.GetVersion(ctx, foldedSteps, workflow.DefaultVersion, 1) == 1

	setupCtx := workflow.WithActivityOptions(sess, workflow.ActivityOptions{
		// Verify and Teardown run in contexts the session's failure does not cancel: a
		// worker that died after they were scheduled must not keep them queued for ever.
		ScheduleToStartTimeout: setupTimeout,
		StartToCloseTimeout:    setupTimeout,
		RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 3, NonRetryableErrorTypes: []string{"bad_input"}},
	})

	// A worker that was killed (or cut off for longer than the heartbeat timeout) takes the
	// hub, the agent and the session with it: its session fails, or an activity on it stops
	// heartbeating. Nothing of this attempt can run any more, Teardown included, and its
	// evidence is incomplete; the attempt ends with ErrWorkerLost and is run again.
	workerLost := false
	lost := func(err error) bool {
		var timeout *temporal.TimeoutError
		var app *temporal.ApplicationError
		gone := workflow.GetSessionInfo(sess).SessionState == workflow.SessionStateFailed ||
			(errors.As(err, &app) && app.Type() == activities.ErrHeartbeatLost) ||
			(errors.As(err, &timeout) && (timeout.TimeoutType() == enumspb.TIMEOUT_TYPE_HEARTBEAT ||
				timeout.TimeoutType() == enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START))
		if gone && workflow.GetVersion(ctx, retryOnLostWorker, workflow.DefaultVersion, 1) == 1 {
			workerLost = true
		}
		return workerLost
	}
	retry := func(stage string, err error) (TrialResult, error) {
		msg := "the worker running the trial was lost during " + stage
		if err != nil {
			msg += ": " + err.Error()
		}
		logger.Warn(msg, "trial", in.Trial.ID)
		return TrialResult{}, temporal.NewApplicationError(msg, ErrWorkerLost)
	}

	var ws Workspace
	var abortReason string
	teardownReason := "agent exited"
	tornDown := false // by FinishTrial
	defer func() {
		if workerLost {
			return // its hub died with its worker; the next attempt starts afresh
		}
		if tornDown {
			return
		}
		// Teardown always runs, on the same session, even when the trial was cancelled.
		dctx, cancel := workflow.NewDisconnectedContext(setupCtx)
		defer cancel()
		err := workflow.ExecuteActivity(dctx, a.Teardown, TeardownInput{Trial: in, Workspace: ws, Reason: teardownReason}).Get(dctx, nil)
		if err != nil {
			logger.Warn("teardown failed", "trial", in.Trial.ID, "error", err)
		}
	}()

	fail := func(stage string, err error) (TrialResult, error) {
		// Cancelled with its run before its agent started: aborted, not failed (and its
		// Verify could not run in the cancelled context anyway). The experiment writes
		// the result into the trial folder.
		if ctx.Err() != nil && workflow.GetVersion(ctx, cancelledIsAborted, workflow.DefaultVersion, 1) == 1 {
			teardownReason = "aborted: the run was cancelled"
			result.Outcome, result.Reason = OutcomeAborted, "the run was cancelled during "+stage
			return result, nil
		}
		teardownReason = stage + " failed"
		verify := VerifyInput{Trial: in, Workspace: ws, Failure: stage + ": " + err.Error(), CloseReason: teardownReason}
		return verifyTrial(setupCtx, verify, result, folded, &tornDown)
	}

	var hub HubInfo
	if folded {
		var su SetUp
		if err := workflow.ExecuteActivity(setupCtx, a.SetUpTrial, in).Get(ctx, &su); err != nil {
			if lost(err) {
				return retry("set up", err)
			}
			return fail("prepare workspace", err)
		}
		ws, hub = su.Workspace, su.Hub
		if su.HubError != "" {
			return fail("start hub", errors.New(su.HubError))
		}
	} else {
		if err := workflow.ExecuteActivity(setupCtx, a.PrepareWorkspace, in).Get(ctx, &ws); err != nil {
			if lost(err) {
				return retry("prepare workspace", err)
			}
			return fail("prepare workspace", err)
		}
		if err := workflow.ExecuteActivity(setupCtx, a.StartHub, AgentInput{Trial: in, Workspace: ws}).Get(ctx, &hub); err != nil {
			if lost(err) {
				return retry("start hub", err)
			}
			return fail("start hub", err)
		}
	}

	// The agent and the watcher run side by side; an abort signal cancels the agent.
	agentCtx, cancelAgent := workflow.WithCancel(sess)
	agentCtx = workflow.WithActivityOptions(agentCtx, workflow.ActivityOptions{
		// The agent activity enforces agent.timeout itself (TERM, then KILL); this bound only
		// catches an activity that could not.
		StartToCloseTimeout: agentTimeout + 2*time.Minute,
		HeartbeatTimeout:    heartbeatTimeout,
		WaitForCancellation: true,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	// The watcher has nothing left to watch once the agent is done, and hears of its cancel
	// only with its next heartbeat (every 2s): the trial does not wait for that. Runs
	// started before this change did.
	watchOpts := workflow.GetActivityOptions(agentCtx)
	if workflow.GetVersion(ctx, watcherNotAwaited, workflow.DefaultVersion, 1) == 1 {
		watchOpts.WaitForCancellation = false
	}
	watchCtx, cancelWatch := workflow.WithCancel(workflow.WithActivityOptions(agentCtx, watchOpts))
	agentFut := workflow.ExecuteActivity(agentCtx, a.RunAgent, AgentInput{Trial: in, Workspace: ws, Hub: hub})
	watchFut := workflow.ExecuteActivity(watchCtx, a.WatchEvents, WatchInput{Trial: in})

	var agentRes AgentResult
	var agentErr error
	var agentDone bool
	abortReason, agentDone, agentErr = waitAgentOrAbort(ctx, SignalAbort, agentFut, &agentRes)
	// The agent may end (cancelled with the run, or failed) in the same moment the run is
	// cancelled: the trial was still aborted, never failed.
	if abortReason == "" && ctx.Err() != nil && workflow.GetVersion(ctx, cancelledIsAborted, workflow.DefaultVersion, 1) == 1 {
		abortReason = "the run was cancelled"
	}
	if !agentDone {
		cancelAgent()
		agentErr = agentFut.Get(agentCtx, &agentRes)
	}
	cancelWatch()
	_ = watchFut.Get(watchCtx, nil)
	if lost(agentErr) {
		return retry("run agent", agentErr)
	}

	verify := verifyInputAfterAgent(in, ws, abortReason, agentErr, agentRes, agentDone, teardownReason)
	teardownReason = verify.CloseReason
	// Verify must run even when the trial was cancelled, so it uses a disconnected context.
	vctx, cancel := workflow.NewDisconnectedContext(setupCtx)
	defer cancel()
	res, err := verifyTrial(vctx, verify, result, folded, &tornDown)
	if res.Outcome == OutcomeFailed && lost(nil) {
		return retry("verify", nil)
	}
	return res, err
}

// verifyTrial runs Verify, or FinishTrial (Verify and Teardown) when folded, which then
// sets tornDown.
func verifyTrial(ctx workflow.Context, in VerifyInput, base TrialResult, folded bool, tornDown *bool) (TrialResult, error) {
	var res TrialResult
	step := a.Verify
	if folded {
		step = a.FinishTrial
	}
	if err := workflow.ExecuteActivity(ctx, step, in).Get(ctx, &res); err != nil {
		base.Outcome = OutcomeFailed
		base.Reason = "verify: " + err.Error()
		if in.Failure != "" {
			base.Reason = in.Failure + "; " + base.Reason
		}
		return base, nil
	}
	*tornDown = folded
	return res, nil
}

// verifyInputAfterAgent is what Verify is given once the agent's step is over (both trial
// paths): why the record closes (its CloseReason, also the teardown's reason; closeReason
// when nothing went wrong), and the failure, if any, that makes the trial failed.
func verifyInputAfterAgent(in TrialInput, ws Workspace, abortReason string, agentErr error, agentRes AgentResult, agentDone bool, closeReason string) VerifyInput {
	verify := VerifyInput{Trial: in, Workspace: ws, Aborted: abortReason}
	switch {
	case abortReason != "":
		closeReason = "aborted: " + abortReason
	case agentErr != nil:
		var canceled *temporal.CanceledError
		if !errors.As(agentErr, &canceled) {
			closeReason = "agent activity failed"
			verify.Failure = "run agent: " + agentErr.Error()
		}
	case agentRes.Error != "":
		closeReason = "agent did not start"
		verify.Failure = "the agent command could not start: " + agentRes.Error
	case agentRes.TimedOut:
		closeReason = "agent timed out"
	}
	if agentDone || abortReason != "" {
		verify.Agent = &agentRes
	}
	verify.CloseReason = closeReason
	return verify
}
