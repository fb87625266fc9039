package workflows

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// inlineTrials is the workflow.GetVersion change id (in ExperimentWorkflow, once a run) of
// running each light trial inline, as a coroutine of the experiment's workflow
// (TrialInput.AbortSignal set), instead of as a child workflow of its own.
//
// Why: a child workflow is Temporal's dearest way to run two activities. Its start, its own
// history and mutable state, its two workflow tasks through matching, its visibility
// record and the extra task of its parent for its start cost the embedded server ~45 ms
// of CPU a trial and ~9 history events (worker BenchmarkTrialShape: 56 ms a trial as a
// child, 12 inline), the larger part of the harness's own CPU a trial and of its round
// trips. Inline, a trial is its steps in the experiment's history (set-up, agent, and
// finish or teardown when needed), each an activity named <trial id>/<step>/<attempt>,
// which is how the web UI shows them; what the trial's own workflow did (a retry policy,
// an abort signal, a cancel from its parent) is done here:
//
//   - a lost worker's attempt (ErrWorkerLost) is run again from a fresh folder, with the
//     child's retry policy (trialRetry): ten attempts, 1 s apart doubling to a minute;
//   - the trial's own abort signal (TrialAbortSignal, which its watcher sends), not the
//     run's: a signal left from an attempt before is dropped at the start of the next;
//   - the run's abort cancels the coroutine's context as it cancelled the children.
//
// Its set-up is a scheduled activity on the shared queue, as a child's was before
// local-set-up: a local one would run on the worker that holds the experiment's sticky
// workflow task, and every trial of the run with it.
const inlineTrials = "inline-trials"

// oneStepTrials is the workflow.GetVersion change id (in ExperimentWorkflow, once a run) of
// running each inline trial as one activity, RunTrial (TrialInput.OneStep), on the shared
// queue: its set-up, its agent and, when the agent ends on its own, its verify and
// teardown, on the worker that took it. Before, the set-up was an activity of its own
// whose end woke the workflow to schedule the agent on the worker's own queue: an
// activity task, a workflow task and six history events a trial, each a round trip and
// a database write of the server. The workflow still finishes what the activity does not
// (an abort, a cancel, a hub that did not start, a failed verify) on the worker's own
// queue, which RunTrial names in its result, or in the details of its cancel; a cancel
// during the set-up is torn down by the activity itself.
const oneStepTrials = "one-step-trials"

// runAttempt runs one attempt of an inline trial: runLightTrial (a stand-in in the
// experiment's own tests, as they stand in for TrialWorkflow).
var runAttempt = runLightTrial

// inlineTrial runs the light trial in inline (in.AbortSignal set), attempt after attempt
// while its worker is lost, and returns its result, or the last attempt's error.
func inlineTrial(ctx workflow.Context, in TrialInput) (TrialResult, error) {
	policy := trialRetry(true)
	interval := policy.InitialInterval
	abortCh := workflow.GetSignalChannel(ctx, in.AbortSignal)
	for attempt := 1; ; attempt++ {
		var stale string
		for abortCh.ReceiveAsync(&stale) {
		}
		r, err := runAttempt(ctx, in, attempt)
		var app *temporal.ApplicationError
		if err == nil || !errors.As(err, &app) || app.Type() != ErrWorkerLost ||
			attempt >= int(policy.MaximumAttempts) || ctx.Err() != nil {
			return r, err
		}
		if workflow.Sleep(ctx, interval) != nil {
			return r, err
		}
		interval = min(time.Duration(float64(interval)*policy.BackoffCoefficient), policy.MaximumInterval)
	}
}
