// Package workflows holds the Temporal workflows of a run: ExperimentWorkflow runs the
// planned trials as TrialWorkflow children, N at a time; TrialWorkflow runs one trial's
// activities in one worker session. Workflow code is deterministic and does no I/O.
package workflows

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/crashwall/chaos/activities"
)

// The trial's activities, through a nil pointer: only their names and types are used.
var a *activities.Activities

// Timeouts of a trial's activities (the agent's own timeout is in the spec).
const (
	setupTimeout     = 2 * time.Minute
	heartbeatTimeout = 20 * time.Second
	defaultAgentTime = 5 * time.Minute
)

// TrialWorkflow runs one trial:
//
//	session ─ PrepareWorkspace ─ StartHub ─┬─ RunAgent ────┬─ Verify ─ Teardown (always)
//	                                       └─ WatchEvents ─┘
//	signal "abort" (from the watcher or a person) ──> cancel RunAgent
//
// All activities run in one worker session, so the hub, the agent and the workspace are
// on the same host. Teardown runs in a disconnected context, also after a cancel.
func TrialWorkflow(ctx workflow.Context, in TrialInput) (TrialResult, error) {
	logger := workflow.GetLogger(ctx)
	result := TrialResult{ID: in.Trial.ID, Cell: in.Trial.Cell, Condition: in.Trial.Condition, Rep: in.Trial.Rep, Seed: in.Trial.Seed}

	agentTimeout := defaultAgentTime
	sess, err := workflow.CreateSession(ctx, &workflow.SessionOptions{
		CreationTimeout:  time.Minute,
		ExecutionTimeout: 2*agentTimeout + 2*setupTimeout,
		HeartbeatTimeout: heartbeatTimeout,
	})
	if err != nil {
		result.Outcome, result.Reason = OutcomeFailed, "no worker session: "+err.Error()
		return result, nil
	}
	defer workflow.CompleteSession(sess)

	setupCtx := workflow.WithActivityOptions(sess, workflow.ActivityOptions{
		StartToCloseTimeout: setupTimeout,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3, NonRetryableErrorTypes: []string{"bad_input"}},
	})

	var ws Workspace
	var abortReason string
	teardownReason := "agent exited"
	defer func() {
		// Teardown always runs, on the same session, even when the trial was cancelled.
		dctx, cancel := workflow.NewDisconnectedContext(setupCtx)
		defer cancel()
		err := workflow.ExecuteActivity(dctx, a.Teardown, TeardownInput{Trial: in, Workspace: ws, Reason: teardownReason}).Get(dctx, nil)
		if err != nil {
			logger.Warn("teardown failed", "trial", in.Trial.ID, "error", err)
		}
	}()

	fail := func(stage string, err error) (TrialResult, error) {
		teardownReason = stage + " failed"
		verify := VerifyInput{Trial: in, Workspace: ws, Failure: stage + ": " + err.Error()}
		return verifyTrial(setupCtx, verify, result)
	}

	if err := workflow.ExecuteActivity(setupCtx, a.PrepareWorkspace, in).Get(ctx, &ws); err != nil {
		return fail("prepare workspace", err)
	}
	var hub HubInfo
	if err := workflow.ExecuteActivity(setupCtx, a.StartHub, AgentInput{Trial: in, Workspace: ws}).Get(ctx, &hub); err != nil {
		return fail("start hub", err)
	}

	// The agent and the watcher run side by side; an abort signal cancels the agent.
	agentCtx, cancelAgent := workflow.WithCancel(sess)
	agentCtx = workflow.WithActivityOptions(agentCtx, workflow.ActivityOptions{
		StartToCloseTimeout: 2 * agentTimeout,
		HeartbeatTimeout:    heartbeatTimeout,
		WaitForCancellation: true,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	watchCtx, cancelWatch := workflow.WithCancel(agentCtx)
	agentFut := workflow.ExecuteActivity(agentCtx, a.RunAgent, AgentInput{Trial: in, Workspace: ws, Hub: hub})
	watchFut := workflow.ExecuteActivity(watchCtx, a.WatchEvents, WatchInput{Trial: in})

	abortCh := workflow.GetSignalChannel(ctx, SignalAbort)
	var agentRes AgentResult
	var agentErr error
	agentDone := false
	sel := workflow.NewSelector(ctx)
	sel.AddFuture(agentFut, func(f workflow.Future) {
		agentDone = true
		agentErr = f.Get(ctx, &agentRes)
	})
	sel.AddReceive(abortCh, func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(ctx, &abortReason)
		if abortReason == "" {
			abortReason = "aborted"
		}
	})
	sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) {
		abortReason = "the run was cancelled"
	})
	for !agentDone && abortReason == "" {
		sel.Select(ctx)
	}
	if !agentDone {
		cancelAgent()
		agentErr = agentFut.Get(agentCtx, &agentRes)
	}
	cancelWatch()
	_ = watchFut.Get(watchCtx, nil)

	verify := VerifyInput{Trial: in, Workspace: ws, Aborted: abortReason}
	switch {
	case abortReason != "":
		teardownReason = "aborted: " + abortReason
	case agentErr != nil:
		var canceled *temporal.CanceledError
		if !errors.As(agentErr, &canceled) {
			teardownReason = "agent activity failed"
			verify.Failure = "run agent: " + agentErr.Error()
		}
	case agentRes.Error != "":
		teardownReason = "agent did not start"
		verify.Failure = "the agent command could not start: " + agentRes.Error
	case agentRes.TimedOut:
		teardownReason = "agent timed out"
	}
	if agentDone || abortReason != "" {
		verify.Agent = &agentRes
	}
	// Verify must run even when the trial was cancelled, so it uses a disconnected context.
	vctx, cancel := workflow.NewDisconnectedContext(setupCtx)
	defer cancel()
	return verifyTrial(vctx, verify, result)
}

func verifyTrial(ctx workflow.Context, in VerifyInput, base TrialResult) (TrialResult, error) {
	var res TrialResult
	if err := workflow.ExecuteActivity(ctx, a.Verify, in).Get(ctx, &res); err != nil {
		base.Outcome = OutcomeFailed
		base.Reason = "verify: " + err.Error()
		if in.Failure != "" {
			base.Reason = in.Failure + "; " + base.Reason
		}
		return base, nil
	}
	return res, nil
}
