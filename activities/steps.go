package activities

import (
	"context"
	"errors"

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
// A light trial (in.Light) learns the worker's own task queue (SetUp.Queue) for its later
// steps; a two-step one first takes one of this worker's trial slots (takeSlot), which its
// Teardown gives back. A one-step trial (in.OneStep, RunTrial) holds the slot the SDK gave
// its activity on the trial queue.
func (a *Activities) SetUpTrial(ctx context.Context, in run.TrialInput) (run.SetUp, error) {
	return a.setUpTrial(ctx, in, !activity.IsActivity(ctx) || activity.GetInfo(ctx).Attempt >= setUpAttempts)
}

// setUpTrial is SetUpTrial; last says this is its last attempt (a hub that does not
// start is then handed back as SetUp.HubError, not as an error to try again).
func (a *Activities) setUpTrial(ctx context.Context, in run.TrialInput, last bool) (run.SetUp, error) {
	if in.Light && !in.OneStep {
		if err := a.takeSlot(ctx, in.Key()); err != nil {
			return run.SetUp{}, err
		}
	}
	ws, err := a.PrepareWorkspace(ctx, in)
	if err != nil {
		a.giveSlot(in.Key())
		return run.SetUp{}, err
	}
	hub, err := a.StartHub(ctx, run.AgentInput{Trial: in, Workspace: ws})
	if err != nil {
		var app *temporal.ApplicationError
		if !last && !(errors.As(err, &app) && app.Type() == ErrBadInput) {
			a.giveSlot(in.Key())
			return run.SetUp{}, err
		}
		return run.SetUp{Workspace: ws, HubError: err.Error(), Queue: a.HostQueue}, nil
	}
	if in.AbortSignal != "" {
		// A trial run inline (workflows/trial_inline.go): the hub's details (its URL, the
		// filled-in command, the tokens) stay on this worker, where the trial's agent runs
		// (RunWatchedAgent takes them from the live trial), out of the experiment's history.
		a.mu.Lock()
		if lt := a.trials[in.Key()]; lt != nil {
			lt.info = hub
		}
		a.mu.Unlock()
		return run.SetUp{Workspace: ws, Queue: a.HostQueue}, nil
	}
	return run.SetUp{Workspace: ws, Hub: hub, Queue: a.HostQueue}, nil
}

// FinishTrial verifies the trial and then tears it down (with in.CloseReason as the
// session's end). When Verify fails nothing is torn down: the activity is tried again,
// and after its last attempt the workflow runs Teardown on its own.
func (a *Activities) FinishTrial(ctx context.Context, in run.VerifyInput) (run.TrialResult, error) {
	res, err := a.Verify(ctx, in)
	if err != nil {
		return res, err
	}
	if err := a.Teardown(ctx, run.TeardownInput{Trial: in.Trial, Workspace: in.Workspace, Reason: in.CloseReason}); err != nil {
		// As a Teardown of its own: the verdict stands, the trouble is logged.
		a.logger().Warn("teardown failed", "trial", in.Trial.Trial.ID, "error", err)
	}
	return res, nil
}
