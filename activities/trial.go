package activities

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/crashwall/chaos/run"
)

// The steps of one trial, each a thin activity over trial.Host: what they add is the
// heartbeats and the Temporal error types (ErrBadInput, ErrHeartbeatLost, a cancel). A
// worker's trial slots are its trial queue's activity slots (worker.NewWorker).

// PrepareWorkspace makes the trial's folder in the run folder and its sandbox
// (trial.Host.PrepareWorkspace).
func (a *Activities) PrepareWorkspace(ctx context.Context, in run.TrialInput) (run.Workspace, error) {
	ws, err := a.host().PrepareWorkspace(ctx, in)
	return ws, fail(err)
}

// StartHub starts the trial's hub and the parts around it and fills in the agent
// command's tokens (trial.Host.StartHub). The hub stays on this worker until Teardown.
func (a *Activities) StartHub(ctx context.Context, in run.AgentInput) (run.HubInfo, error) {
	info, err := a.host().StartHub(ctx, in)
	return info, fail(err)
}

// RunAgent runs the agent (trial.Host.RunAgent), heartbeating while it runs, from a
// goroutine of its own: a cancel stops the agent (TERM, the grace period, KILL), and the
// heartbeats go on until it is gone. A cancel the workflow asked for returns ctx.Err();
// any other cause is the SDK giving up on a heartbeat (a starved worker or server): the
// trial is not the agent's failure, and its workflow runs it again (ErrHeartbeatLost).
func (a *Activities) RunAgent(ctx context.Context, in run.AgentInput) (run.AgentResult, error) {
	start := time.Now()
	stop := keepAlive(ctx, a.beatEvery(), func() any { return time.Since(start).String() })
	res, err := a.host().RunAgent(ctx, in)
	stop()
	if err != nil && ctx.Err() != nil {
		var asked *temporal.CanceledError
		if cause := context.Cause(ctx); cause != nil && !errors.As(cause, &asked) && !errors.Is(cause, context.Canceled) {
			return res, temporal.NewApplicationError("the agent was stopped because its heartbeat failed: "+cause.Error(), ErrHeartbeatLost)
		}
	}
	return res, fail(err)
}

// ErrHeartbeatLost is the error type of a RunAgent stopped because the SDK could not
// heartbeat (not because anyone asked): the trial workflow treats it as a lost worker.
const ErrHeartbeatLost = "heartbeat_lost"

// Verify reads the trial's evidence and writes its result.json (trial.Host.Verify).
func (a *Activities) Verify(ctx context.Context, in run.VerifyInput) (run.TrialResult, error) {
	res, err := a.host().Verify(ctx, in)
	return res, fail(err)
}

// Teardown ends the trial and keeps its evidence (trial.Host.Teardown). It is idempotent.
func (a *Activities) Teardown(ctx context.Context, in run.TeardownInput) error {
	return a.host().Teardown(ctx, in)
}
