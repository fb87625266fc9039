package activities

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/crashwall/chaos/run"
)

// A trial's quick local steps, folded two by two so that each pair costs one round trip
// through the server instead of two (docs/ARCHITECTURE.md, "A trial's round trips"):
//
//	session ─ SetUpTrial (PrepareWorkspace + StartHub) ─ RunAgent ∥ WatchEvents ─ FinishTrial (Verify + Teardown)
//
// Each still runs on the session's worker, where the hub lives.

// setUpAttempts is how many times SetUpTrial is tried (the workflow's retry policy for
// the trial's quick steps): its last attempt hands back a hub that did not start as
// SetUp.HubError, with the workspace, so the trial is verified and torn down.
const setUpAttempts = 3

// SetUpTrial prepares the trial's workspace and starts its hub. A hub that fails to start
// is tried again with the whole activity (a fresh workspace, as a retried trial gets),
// except for bad input, which no retry mends.
//
// It names this worker's own task queue (SetUp.Queue), where the trial's later steps run.
// It takes no slot of its own: the trial queue's activity slots are the worker's trials.
func (a *Activities) SetUpTrial(ctx context.Context, in run.TrialInput) (run.SetUp, error) {
	return a.setUpTrial(ctx, in, !activity.IsActivity(ctx) || activity.GetInfo(ctx).Attempt >= setUpAttempts)
}

// setUpTrial is SetUpTrial; last says this is its last attempt (a hub that does not
// start is then handed back as SetUp.HubError, not as an error to try again).
func (a *Activities) setUpTrial(ctx context.Context, in run.TrialInput, last bool) (run.SetUp, error) {
	t0 := time.Now()
	ws, err := a.PrepareWorkspace(ctx, in)
	if err != nil {
		a.giveSlot(in.Key())
		return run.SetUp{}, err
	}
	steps := []run.Step{{Name: "worktree", Duration: time.Since(t0)}}
	t0 = time.Now()
	hub, err := a.StartHub(ctx, run.AgentInput{Trial: in, Workspace: ws})
	steps = append(steps, run.Step{Name: "proxy", Duration: time.Since(t0)})
	if err != nil {
		var app *temporal.ApplicationError
		if !last && !(errors.As(err, &app) && app.Type() == ErrBadInput) {
			a.giveSlot(in.Key())
			return run.SetUp{}, err
		}
		return run.SetUp{Workspace: ws, HubError: err.Error(), Queue: a.HostQueue, Steps: steps}, nil
	}
	// The hub's details (its URL, the filled-in command, the tokens) stay on this worker,
	// where the trial's agent runs (RunWatchedAgent takes them from the live trial), out
	// of the workflow's history.
	a.mu.Lock()
	if lt := a.trials[in.Key()]; lt != nil {
		lt.info = hub
	}
	a.mu.Unlock()
	return run.SetUp{Workspace: ws, Queue: a.HostQueue, Steps: steps}, nil
}

// FinishTrial verifies the trial and then tears it down (with in.CloseReason as the
// session's end). When Verify fails nothing is torn down: the activity is tried again,
// and after its last attempt the workflow runs Teardown on its own.
func (a *Activities) FinishTrial(ctx context.Context, in run.VerifyInput) (run.TrialResult, error) {
	t0 := time.Now()
	res, err := a.Verify(ctx, in)
	if err != nil {
		return res, err
	}
	res.Steps = append(res.Steps, run.Step{Name: "verify", Duration: time.Since(t0)})
	t0 = time.Now()
	if err := a.Teardown(ctx, run.TeardownInput{Trial: in.Trial, Workspace: in.Workspace, Reason: in.CloseReason}); err != nil {
		// As a Teardown of its own: the verdict stands, the trouble is logged.
		a.logger().Warn("teardown failed", "trial", in.Trial.Trial.ID, "error", err)
	}
	res.Steps = append(res.Steps, run.Step{Name: "teardown", Duration: time.Since(t0)})
	return res, nil
}
