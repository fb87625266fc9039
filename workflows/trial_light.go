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

// lightTrial is the workflow.GetVersion change id (in ExperimentWorkflow, once a run) of
// running trials as lightTrialWorkflow: TrialInput.Light. A trial's input is in its
// history, so each trial replays on the path it started on, and a light trial writes no
// version marker (nor the search attribute each marker upserts) of its own.
const lightTrial = "light-trial"

// localSetUpTrial is the workflow.GetVersion change id (in ExperimentWorkflow, once a run) of a
// light trial's SetUpTrial as a local activity (TrialInput.LocalSetUp, setUpLight).
const localSetUpTrial = "local-set-up"

// WatchedAgentResult is RunWatchedAgent's result (an alias, as in types.go).
type WatchedAgentResult = run.WatchedAgentResult

// lightTrialWorkflow runs one trial without a worker session, in two or three activities:
//
//	SetUpTrial (shared queue) ─ RunWatchedAgent [─ FinishTrial]   (the set-up worker's queue)
//	signal "abort" (from the watcher inside RunWatchedAgent, or a person) ──> cancel it
//
// An agent that ends on its own is verified and torn down inside RunWatchedAgent (two
// activities a trial); after an abort, a cancel or a failed Verify, FinishTrial runs.
//
// SetUpTrial runs on whichever worker takes it and returns that worker's own task queue
// (SetUp.Queue); the agent, its watcher, Verify and Teardown run there, on the host of the
// hub. The behaviour is that of TrialWorkflow with every one of its GetVersion changes
// (retryOnNoSession, retryOnLostWorker, cancelledIsAborted, watcherNotAwaited,
// foldedSteps) on. A lost worker is seen as a step on its queue that no worker starts
// (schedule-to-start timeout), an agent whose heartbeat stops, or a worker with no slot
// left (activities.ErrWorkerBusy): the attempt ends with ErrWorkerLost and the experiment
// runs the trial again, from a fresh folder.
func lightTrialWorkflow(ctx workflow.Context, in TrialInput) (TrialResult, error) {
	return runLightTrial(ctx, in, 0)
}

// runLightTrial is a light trial's body. attempt is 0 for a trial that is a workflow of its
// own (lightTrialWorkflow); else the trial runs inline in its experiment's workflow
// (trial_inline.go) and this is its attempt: its set-up is then a scheduled activity on
// the shared queue, each of its steps has an activity id named by trial, step and
// attempt, and its abort signal is the trial's own (in.AbortSignal).
func runLightTrial(ctx workflow.Context, in TrialInput, attempt int) (TrialResult, error) {
	logger := workflow.GetLogger(ctx)
	result := TrialResult{ID: in.Trial.ID, Cell: in.Trial.Cell, Condition: in.Trial.Condition, Rep: in.Trial.Rep, Seed: in.Trial.Seed}
	agentTimeout, heartbeatTimeout := trialTimeouts(in)

	quick := workflow.ActivityOptions{
		ScheduleToStartTimeout: setupTimeout,
		StartToCloseTimeout:    setupTimeout,
		RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 3, NonRetryableErrorTypes: []string{"bad_input"}},
	}
	setupCtx := workflow.WithActivityOptions(ctx, quick)
	hostCtx := setupCtx // the set-up worker's queue, once known
	// step names an inline trial's step (its activity id: unique in the experiment's
	// history, readable in the web UI); a trial of its own keeps the SDK's ids.
	step := func(c workflow.Context, name string) workflow.Context {
		if attempt == 0 {
			return c
		}
		o := workflow.GetActivityOptions(c)
		o.ActivityID = fmt.Sprintf("%s/%s/%d", in.Trial.ID, name, attempt)
		return workflow.WithActivityOptions(c, o)
	}
	signal := SignalAbort
	if attempt > 0 {
		signal = in.AbortSignal
	}

	var ws Workspace
	var abortReason string
	teardownReason := "agent exited"

	workerLost := false
	lost := func(err error) bool {
		var timeout *temporal.TimeoutError
		var app *temporal.ApplicationError
		return (errors.As(err, &app) && (app.Type() == activities.ErrHeartbeatLost || app.Type() == activities.ErrWorkerBusy)) ||
			(errors.As(err, &timeout) && (timeout.TimeoutType() == enumspb.TIMEOUT_TYPE_HEARTBEAT ||
				timeout.TimeoutType() == enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START))
	}
	retry := func(stage string, err error) (TrialResult, error) {
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
			r.Outcome, r.Reason = OutcomeAborted, reason+" ("+msg+")"
			return r, nil
		}
		workerLost = true
		logger.Warn(msg, "trial", in.Trial.ID)
		return TrialResult{}, temporal.NewApplicationError(msg, ErrWorkerLost)
	}
	tornDown := false // by FinishTrial
	defer func() {
		if workerLost || tornDown {
			return
		}
		// Teardown always runs, on the hub's worker, even when the trial was cancelled.
		dctx, cancel := workflow.NewDisconnectedContext(hostCtx)
		defer cancel()
		err := workflow.ExecuteActivity(step(dctx, "teardown"), a.Teardown, TeardownInput{Trial: in, Workspace: ws, Reason: teardownReason}).Get(dctx, nil)
		if err != nil {
			logger.Warn("teardown failed", "trial", in.Trial.ID, "error", err)
		}
	}()
	finish := func(c workflow.Context, verify VerifyInput) (TrialResult, error) {
		res, err := finishLight(step(c, "finish"), verify, result, &tornDown)
		if err != nil && lost(err) {
			return retry("verify", err)
		}
		return res, nil
	}
	fail := func(stage string, err error) (TrialResult, error) {
		if ctx.Err() != nil {
			teardownReason = "aborted: the run was cancelled"
			result.Outcome, result.Reason = OutcomeAborted, "the run was cancelled during "+stage
			return result, nil
		}
		teardownReason = stage + " failed"
		return finish(hostCtx, VerifyInput{Trial: in, Workspace: ws, Failure: stage + ": " + err.Error(), CloseReason: teardownReason})
	}

	// One step: the set-up, the agent and its finish are one activity, RunTrial, on the
	// shared queue (trial_inline.go, oneStepTrials); what it set up comes back with it.
	oneStep := attempt > 0 && in.OneStep
	var su SetUp
	setUp := func(got SetUp) (TrialResult, error, bool) {
		su, ws = got, got.Workspace
		if su.Queue != "" {
			hostCtx = workflow.WithTaskQueue(setupCtx, su.Queue)
		}
		if su.HubError != "" {
			r, err := fail("start hub", errors.New(su.HubError))
			return r, err, true
		}
		return TrialResult{}, nil, false
	}
	if !oneStep {
		if err := setUpLight(ctx, step(setupCtx, "set-up"), in, attempt > 0, quick, &su); err != nil {
			if ctx.Err() == nil && lost(err) {
				return retry("set up", err)
			}
			return fail("prepare workspace", err)
		}
		if r, err, done := setUp(su); done {
			return r, err
		}
	}

	// The agent (and its watcher); an abort signal cancels it.
	agentCtx, cancelAgent := workflow.WithCancel(hostCtx)
	agentCtx = workflow.WithActivityOptions(agentCtx, workflow.ActivityOptions{
		TaskQueue: workflow.GetActivityOptions(hostCtx).TaskQueue,
		// Nothing polls a dead worker's queue: its agent never starts.
		ScheduleToStartTimeout: setupTimeout,
		// The agent activity enforces agent.timeout itself (TERM, then KILL); this bound only
		// catches an activity that could not.
		StartToCloseTimeout: agentTimeout + 2*time.Minute,
		HeartbeatTimeout:    heartbeatTimeout,
		WaitForCancellation: true,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	var agentFut workflow.Future
	if oneStep {
		o := workflow.GetActivityOptions(agentCtx)
		// The run's trial queue, where each worker polls with one slot per trial it
		// holds: a trial waits there for a free slot, however long (no schedule-to-start).
		o.TaskQueue = run.TrialTaskQueue(workflow.GetInfo(ctx).TaskQueueName)
		o.ScheduleToStartTimeout = 0
		o.StartToCloseTimeout += setupTimeout
		agentCtx = step(workflow.WithActivityOptions(agentCtx, o), "run")
		agentFut = workflow.ExecuteActivity(agentCtx, a.RunTrial, in)
	} else {
		agentCtx = step(agentCtx, "agent")
		agentTrial := in
		if attempt > 0 {
			// The spec's text stays out of the experiment's history at this step: the hub's
			// worker has it from the set-up (activities specOf). (A child's history carried
			// it once a trial; inline, every trial's every step would.)
			agentTrial.Spec.YAML = nil
		}
		agentFut = workflow.ExecuteActivity(agentCtx, a.RunWatchedAgent, AgentInput{Trial: agentTrial, Workspace: ws, Hub: su.Hub, Finish: true})
	}

	var out WatchedAgentResult
	var agentErr error
	var agentDone bool
	abortReason, agentDone, agentErr = waitAgentOrAbort(ctx, signal, agentFut, &out)
	if abortReason == "" && ctx.Err() != nil {
		abortReason = "the run was cancelled"
	}
	if !agentDone {
		cancelAgent()
		agentErr = agentFut.Get(agentCtx, &out)
	}
	if oneStep {
		// A cancelled RunTrial names what it set up in its error's details.
		var cancelled *temporal.CanceledError
		if errors.As(agentErr, &cancelled) && cancelled.HasDetails() {
			_ = cancelled.Details(&out)
		}
		switch {
		case out.SetUp != nil:
			if r, err, done := setUp(*out.SetUp); done {
				return r, err
			}
		case lost(agentErr):
		case abortReason != "" || ctx.Err() != nil:
			// Cancelled before anything was set up (or after RunTrial took back what
			// it had): nothing to verify or tear down.
			tornDown = true
			r := result
			r.Outcome, r.Reason = OutcomeAborted, abortReason
			return r, nil
		case agentErr != nil:
			// Nothing named as set up: its set-up failed, or the activity outlived its
			// bound (it could not stop its agent) and what it set up is not known here.
			var timeout *temporal.TimeoutError
			if errors.As(agentErr, &timeout) {
				return fail("run agent", agentErr)
			}
			return fail("prepare workspace", agentErr)
		}
	}
	if lost(agentErr) {
		return retry("run agent", agentErr)
	}
	if agentErr == nil && out.Result != nil {
		// The agent ended on its own and its activity verified and tore the trial down;
		// an abort that came after that changes nothing but a run's cancel, which makes
		// the trial aborted, never failed.
		tornDown = true
		res := *out.Result
		if ctx.Err() != nil {
			res.Outcome, res.Reason = OutcomeAborted, "the run was cancelled"
		}
		return res, nil
	}
	if abortReason == "" {
		abortReason = out.Abort // the watcher's, if its signal is not in yet
	}
	agentRes := out.Agent

	verify := verifyInputAfterAgent(in, ws, abortReason, agentErr, agentRes, agentDone, teardownReason)
	teardownReason = verify.CloseReason
	// Verify must run even when the trial was cancelled, so it uses a disconnected context.
	vctx, cancel := workflow.NewDisconnectedContext(hostCtx)
	defer cancel()
	return finish(vctx, verify)
}

// setUpLight runs SetUpTrial: a scheduled activity on the shared queue (setupCtx), or,
// with in.LocalSetUp and not inline, a local activity in the worker that runs this
// workflow task. (Inline, that worker is the one that holds the experiment's sticky
// workflow task: every trial of the run would be set up, and so run, on it.)
//
// Why local: the worker that takes a trial's first workflow task sets the trial up in
// that task and schedules the agent in the same task's completion, where a scheduled
// SetUpTrial cost an activity task (matching, three history events) and a second
// workflow task (three more), each a round trip and a database write of the embedded
// server: a light trial 17 history events -> 12 (BenchmarkTrialCPU). The worker that
// runs it names its own queue as before (SetUp.Queue). A worker lost during it takes
// the workflow task with it: the task times out and another worker runs the set-up
// again, as a retried SetUpTrial was.
func setUpLight(ctx, setupCtx workflow.Context, in TrialInput, inline bool, quick workflow.ActivityOptions, su *SetUp) error {
	if !in.LocalSetUp || inline {
		return workflow.ExecuteActivity(setupCtx, a.SetUpTrial, in).Get(ctx, su)
	}
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: quick.StartToCloseTimeout,
		RetryPolicy:         quick.RetryPolicy,
	})
	return workflow.ExecuteLocalActivity(lctx, a.SetUpTrial, in).Get(ctx, su)
}

// finishLight runs FinishTrial (Verify and Teardown), which sets tornDown. Its error is
// returned with the failed result, for the caller to tell a lost worker from a failure.
func finishLight(ctx workflow.Context, in VerifyInput, base TrialResult, tornDown *bool) (TrialResult, error) {
	var res TrialResult
	if err := workflow.ExecuteActivity(ctx, a.FinishTrial, in).Get(ctx, &res); err != nil {
		base.Outcome = OutcomeFailed
		base.Reason = "verify: " + err.Error()
		if in.Failure != "" {
			base.Reason = in.Failure + "; " + base.Reason
		}
		return base, err
	}
	*tornDown = true
	return res, nil
}

// trialTimeouts are the agent's timeout and the agent activity's heartbeat timeout.
func trialTimeouts(in TrialInput) (agent, heartbeat time.Duration) {
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
