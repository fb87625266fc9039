// Package workflows holds the Temporal workflows of a run: ExperimentWorkflow hands the
// planned trials to TrialBatchWorkflow children, a few hundred each, so that as many run
// at once as the run asks; a batch runs each trial as one activity, RunTrial, and
// finishes what it did not. Workflow code is deterministic and does no I/O.
package workflows

import (
	"errors"
	"fmt"
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
	defaultAgentTime = run.DefaultAgentTimeout
)

// ErrWorkerLost is the error type an attempt of a trial ends with when the worker that ran
// it is gone: the trial is run again, from a fresh folder (trialAttempts).
const ErrWorkerLost = "worker_lost"

// lostRetry is how a trial whose worker was lost is run again: ten attempts, each from a
// fresh folder, 1 s apart doubling to a minute, before it is recorded failed with the
// last loss as its reason. It guards against a pool of workers that can never hold the
// trial; it is not a judgement of the trial, and a trial waiting for a free slot never
// spends one (RunTrial has no schedule-to-start timeout: it waits in the trial queue).
var lostRetry = temporal.RetryPolicy{MaximumAttempts: 10, InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute}

// runAttempt runs one attempt of a trial: runTrial (a stand-in in the experiment's own
// tests).
var runAttempt = runTrial

// trialAttempts runs the trial, attempt after attempt while its worker is lost, and
// returns its result, or the last attempt's error. A signal left from an attempt before
// is dropped at the start of the next.
func trialAttempts(ctx workflow.Context, in run.TrialInput) (run.TrialResult, error) {
	interval := lostRetry.InitialInterval
	abortCh := workflow.GetSignalChannel(ctx, in.AbortSignal)
	for attempt := 1; ; attempt++ {
		var stale string
		for abortCh.ReceiveAsync(&stale) {
		}
		r, err := runAttempt(ctx, in, attempt)
		var app *temporal.ApplicationError
		if err == nil || !errors.As(err, &app) || app.Type() != ErrWorkerLost ||
			attempt >= int(lostRetry.MaximumAttempts) || ctx.Err() != nil {
			return r, err
		}
		if workflow.Sleep(ctx, interval) != nil {
			return r, err
		}
		interval = min(time.Duration(float64(interval)*lostRetry.BackoffCoefficient), lostRetry.MaximumInterval)
	}
}

// runTrial runs one attempt of a trial:
//
//	RunTrial <trial>/run/<n>         trial queue (run.TrialTaskQueue): set-up, agent, verify, teardown
//	[FinishTrial <trial>/finish/<n>] the worker's own queue, when RunTrial did not finish
//	[Teardown <trial>/teardown/<n>]  the worker's own queue, when FinishTrial failed
//	signal abort/<trial> (its watcher, or a person) ──> cancel RunTrial
//
// RunTrial runs on whichever worker takes it from the trial queue, which that worker
// polls with as many slots as trials it runs at once: a trial that finds none waits there,
// unstarted, spending nothing. An agent that ends on its own is verified and torn down
// inside it. Every other ending (an abort, a cancel, a hub that did not start, a failed
// verify) is finished here, on the queue of the worker that set it up, which RunTrial
// names in its result or in its cancel's details. A worker lost meanwhile (RunTrial's
// heartbeat stops, or the finish is not started on its queue) ends the attempt with
// ErrWorkerLost; the trial runs again.
func runTrial(ctx workflow.Context, in run.TrialInput, attempt int) (run.TrialResult, error) {
	logger := workflow.GetLogger(ctx)
	result := run.TrialResult{ID: in.Trial.ID, Cell: in.Trial.Cell, Condition: in.Trial.Condition, Rep: in.Trial.Rep, Seed: in.Trial.Seed}
	agentTimeout, heartbeatTimeout := trialTimeouts(in)

	// The worker's own queue, once RunTrial names it. Nothing polls a dead worker's
	// queue: a step there that no worker starts within setupTimeout means it is lost.
	hostCtx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		ScheduleToStartTimeout: setupTimeout,
		StartToCloseTimeout:    setupTimeout,
		RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 3, NonRetryableErrorTypes: []string{activities.ErrBadInput}},
	})
	// step names a step's activity: unique in the batch's history, readable in the web UI.
	step := func(c workflow.Context, name string) workflow.Context {
		o := workflow.GetActivityOptions(c)
		o.ActivityID = fmt.Sprintf("%s/%s/%d", in.Trial.ID, name, attempt)
		return workflow.WithActivityOptions(c, o)
	}

	var ws run.Workspace
	var abortReason string
	teardownReason := run.AgentExited

	workerLost := false
	lost := func(err error) bool {
		var timeout *temporal.TimeoutError
		var app *temporal.ApplicationError
		return (errors.As(err, &app) && app.Type() == activities.ErrHeartbeatLost) ||
			(errors.As(err, &timeout) && (timeout.TimeoutType() == enumspb.TIMEOUT_TYPE_HEARTBEAT ||
				timeout.TimeoutType() == enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START))
	}
	retry := func(stage string, err error) (run.TrialResult, error) {
		msg := "the worker running the trial was lost during " + stage
		if err != nil {
			msg += ": " + err.Error()
		}
		if abortReason != "" || ctx.Err() != nil {
			// An aborted trial (or one whose run was cancelled) is never run again: a
			// retry would start its agent anew after the abort (an agent's activity can
			// go silent while it stops a starved agent). It is aborted; the teardown is
			// still tried on its host.
			reason := abortReason
			if reason == "" {
				reason = "the run was cancelled"
			}
			logger.Warn(msg+"; the trial was aborted, not run again", "trial", in.Trial.ID)
			teardownReason = "aborted: " + reason
			r := result
			r.Outcome, r.Reason = run.OutcomeAborted, reason+" ("+msg+")"
			return r, nil
		}
		workerLost = true
		logger.Warn(msg, "trial", in.Trial.ID)
		return run.TrialResult{}, temporal.NewApplicationError(msg, ErrWorkerLost)
	}
	tornDown := false // by RunTrial or FinishTrial, or nothing to tear down
	defer func() {
		if workerLost || tornDown {
			return
		}
		// Teardown always runs, on the hub's worker, even when the trial was cancelled.
		dctx, cancel := workflow.NewDisconnectedContext(hostCtx)
		defer cancel()
		err := workflow.ExecuteActivity(step(dctx, "teardown"), a.Teardown, run.TeardownInput{Trial: in, Workspace: ws, Reason: teardownReason}).Get(dctx, nil)
		if err != nil {
			logger.Warn("teardown failed", "trial", in.Trial.ID, "error", err)
		}
	}()
	finish := func(c workflow.Context, verify run.VerifyInput) (run.TrialResult, error) {
		res, err := finishTrial(step(c, "finish"), verify, result, &tornDown)
		if err != nil && lost(err) {
			return retry("verify", err)
		}
		return res, nil
	}
	fail := func(stage string, err error) (run.TrialResult, error) {
		if ctx.Err() != nil {
			teardownReason = "aborted: the run was cancelled"
			result.Outcome, result.Reason = run.OutcomeAborted, "the run was cancelled during "+stage
			return result, nil
		}
		teardownReason = stage + " failed"
		return finish(hostCtx, run.VerifyInput{Trial: in, Workspace: ws, Failure: stage + ": " + err.Error(), CloseReason: teardownReason})
	}

	// RunTrial waits in the trial queue for a slot as long as it takes: no
	// schedule-to-start timeout. Once started, its heartbeat says its worker lives; its
	// bound only catches an activity that could not stop its agent (which enforces
	// agent.timeout itself: TERM, then KILL).
	runCtx, cancelRun := workflow.WithCancel(ctx)
	runCtx = step(workflow.WithActivityOptions(runCtx, workflow.ActivityOptions{
		TaskQueue:           run.TrialTaskQueue(workflow.GetInfo(ctx).TaskQueueName),
		StartToCloseTimeout: agentTimeout + 2*time.Minute + setupTimeout,
		HeartbeatTimeout:    heartbeatTimeout,
		WaitForCancellation: true,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	}), "run")
	runFut := workflow.ExecuteActivity(runCtx, a.RunTrial, in)

	var out run.WatchedAgentResult
	abortReason, runDone, runErr := waitAgentOrAbort(ctx, in.AbortSignal, runFut, &out)
	if abortReason == "" && ctx.Err() != nil {
		abortReason = "the run was cancelled"
	}
	if !runDone {
		cancelRun()
		runErr = runFut.Get(runCtx, &out)
	}
	// A cancelled RunTrial names what it set up in its error's details.
	var cancelled *temporal.CanceledError
	if errors.As(runErr, &cancelled) && cancelled.HasDetails() {
		_ = cancelled.Details(&out)
	}
	switch {
	case out.SetUp != nil:
		ws = out.SetUp.Workspace
		if out.SetUp.Queue != "" {
			hostCtx = workflow.WithTaskQueue(hostCtx, out.SetUp.Queue)
		}
		if out.SetUp.HubError != "" {
			return fail("start hub", errors.New(out.SetUp.HubError))
		}
	case lost(runErr):
		return retry("run agent", runErr)
	case abortReason != "":
		// Cancelled before anything was set up (or after RunTrial took back what it
		// had): nothing to verify or tear down.
		tornDown = true
		r := result
		r.Outcome, r.Reason = run.OutcomeAborted, abortReason
		return r, nil
	case runErr != nil:
		// Nothing named as set up: its set-up failed, or the activity outlived its bound
		// (it could not stop its agent) and what it set up is not known here: verified
		// as failed by any worker, which writes its result into its folder.
		var timeout *temporal.TimeoutError
		if errors.As(runErr, &timeout) {
			return fail("run agent", runErr)
		}
		return fail("prepare workspace", runErr)
	}
	if lost(runErr) {
		return retry("run agent", runErr)
	}
	if runErr == nil && out.Result != nil {
		// The agent ended on its own and RunTrial verified and tore the trial down; an
		// abort that came after that changes nothing, but a run's cancel makes the trial
		// aborted, never failed.
		tornDown = true
		res := *out.Result
		if ctx.Err() != nil {
			res.Outcome, res.Reason = run.OutcomeAborted, "the run was cancelled"
		}
		return res, nil
	}
	if abortReason == "" {
		abortReason = out.Abort // the watcher's, if its signal is not in yet
	}
	verify := verifyInputAfterAgent(in, ws, abortReason, runErr, out.Agent, runDone, teardownReason)
	if out.SetUp != nil {
		verify.Steps = append(verify.Steps, out.SetUp.Steps...)
	}
	verify.Steps = append(verify.Steps, run.Step{Name: "agent", Duration: out.Agent.Duration})
	teardownReason = verify.CloseReason
	// Verify must run even when the trial was cancelled, so it uses a disconnected context.
	vctx, cancel := workflow.NewDisconnectedContext(hostCtx)
	defer cancel()
	return finish(vctx, verify)
}

// finishTrial runs FinishTrial (Verify and Teardown), which sets tornDown. Its error is
// returned with the failed result, for the caller to tell a lost worker from a failure.
func finishTrial(ctx workflow.Context, in run.VerifyInput, base run.TrialResult, tornDown *bool) (run.TrialResult, error) {
	var res run.TrialResult
	if err := workflow.ExecuteActivity(ctx, a.FinishTrial, in).Get(ctx, &res); err != nil {
		base.Outcome = run.OutcomeFailed
		base.Reason = "verify: " + err.Error()
		if in.Failure != "" {
			base.Reason = in.Failure + "; " + base.Reason
		}
		return base, err
	}
	*tornDown = true
	return res, nil
}

// trialTimeouts are the agent's timeout and RunTrial's heartbeat timeout.
func trialTimeouts(in run.TrialInput) (agent, heartbeat time.Duration) {
	agent = defaultAgentTime
	if in.AgentTimeout > 0 {
		agent = in.AgentTimeout
	}
	// A worker starved of CPU answers late; only one silent for this long is lost.
	heartbeat = in.HeartbeatTimeout
	if heartbeat <= 0 {
		heartbeat = run.HeartbeatTimeoutFor(agent)
	}
	return agent, heartbeat
}

// verifyInputAfterAgent is what Verify is given once the agent's step is over: why the
// record closes (its CloseReason, also the teardown's reason; closeReason when nothing
// went wrong), and the failure, if any, that makes the trial failed.
func verifyInputAfterAgent(in run.TrialInput, ws run.Workspace, abortReason string, agentErr error, agentRes run.AgentResult, agentDone bool, closeReason string) run.VerifyInput {
	verify := run.VerifyInput{Trial: in, Workspace: ws, Aborted: abortReason}
	switch {
	case abortReason != "":
		closeReason = "aborted: " + abortReason
	case agentErr != nil:
		var canceled *temporal.CanceledError
		if !errors.As(agentErr, &canceled) {
			closeReason = "agent activity failed"
			verify.Failure = "run agent: " + agentErr.Error()
		}
	case agentRes.Error != "" || agentRes.TimedOut:
		closeReason, verify.Failure = agentRes.Ending()
	}
	if agentDone || abortReason != "" {
		verify.Agent = &agentRes
	}
	verify.CloseReason = closeReason
	return verify
}
