package activities

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/crashwall/chaos/run"
)

// RunTrial is a whole trial in one activity, on whichever worker takes it from the run's
// trial queue (run.TrialTaskQueue; workflows/trial_inline.go, "one-step-trials"), where a
// worker polls with one activity slot per trial it holds (worker.NewWorker), so a trial
// waits in the queue for a free one: SetUpTrial, then
// RunWatchedAgent with Finish, on this worker, where the hub it started lives. An agent that
// ends on its own is verified and torn down here too (WatchedAgentResult.Result), so a
// trial that goes as planned costs its workflow one activity, not two.
//
// Every other ending is the workflow's to finish, as it finished them after two steps:
// the result names what was set up (WatchedAgentResult.SetUp: the workspace, this worker's
// own queue, a hub that did not start), also when the trial was cancelled (then as the
// details of the CanceledError), and the workflow runs FinishTrial or Teardown there. A
// set-up that fails is tried again here, as the workflow's retry policy tried SetUpTrial
// (setUpAttempts, a bad input never); its last error is the activity's, with nothing set
// up. A trial cancelled during its set-up is torn down here, since nothing of it is known
// to the workflow yet.
func (a *Activities) RunTrial(ctx context.Context, in run.TrialInput) (run.WatchedAgentResult, error) {
	// The set-up heartbeats too: a starved machine may take a while, and a cancel
	// reaches an activity only through its heartbeats.
	stopBeat := keepAlive(ctx, a.beatEvery(), func() any { return "set-up" })
	var su run.SetUp
	var err error
	for attempt := 1; ; attempt++ {
		su, err = a.setUpTrial(ctx, in, attempt >= setUpAttempts)
		var app *temporal.ApplicationError
		if err == nil || ctx.Err() != nil || attempt >= setUpAttempts ||
			(errors.As(err, &app) && (app.NonRetryable() || app.Type() == ErrBadInput)) {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(attempt) * time.Second):
		}
	}
	stopBeat()
	if err != nil || ctx.Err() != nil {
		if ctx.Err() != nil {
			// Cancelled while setting up: what was made goes now.
			tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Minute)
			defer cancel()
			if terr := a.Teardown(tctx, run.TeardownInput{Trial: in, Workspace: su.Workspace, Reason: "aborted during set-up"}); terr != nil {
				a.logger().Warn("teardown after a cancelled set-up failed", "trial", in.Trial.ID, "error", terr)
			}
			return run.WatchedAgentResult{}, temporal.NewCanceledError()
		}
		return run.WatchedAgentResult{}, err
	}
	out := run.WatchedAgentResult{SetUp: &su}
	if su.HubError != "" {
		return out, nil
	}
	agentTrial := in
	agentTrial.Spec.YAML = nil // the live trial has it (specOf)
	res, err := a.RunWatchedAgent(ctx, run.AgentInput{Trial: agentTrial, Workspace: su.Workspace, Hub: su.Hub, Finish: true})
	res.SetUp = &su
	var asked *temporal.CanceledError
	if errors.Is(err, context.Canceled) || errors.As(err, &asked) {
		// The workflow learns where the trial is from the details.
		return res, temporal.NewCanceledError(res)
	}
	return res, err
}
