package activities

import (
	"context"

	"go.temporal.io/sdk/activity"

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

// setUpTrial is SetUpTrial (trial.Host.SetUp); last says this is its last attempt (a hub
// that does not start is then handed back as SetUp.HubError, not as an error to try
// again).
func (a *Activities) setUpTrial(ctx context.Context, in run.TrialInput, last bool) (run.SetUp, error) {
	su, err := a.host().SetUp(ctx, in, last)
	if err != nil {
		return su, fail(err)
	}
	su.Queue = a.HostQueue
	return su, nil
}

// FinishTrial verifies the trial and then tears it down (trial.Host.Finish), giving back
// its slot. When Verify fails nothing is torn down: the activity is tried again, and
// after its last attempt the workflow runs Teardown on its own.
func (a *Activities) FinishTrial(ctx context.Context, in run.VerifyInput) (run.TrialResult, error) {
	res, err := a.host().Finish(ctx, in)
	if err != nil {
		return res, fail(err)
	}
	return res, nil
}
