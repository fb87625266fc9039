package trial

import (
	"context"
	"time"

	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/run"
)

// One trial on a Host, in the order its steps run:
//
//	SetUp   = PrepareWorkspace (trial folder, sandbox) + StartHub (hub, parts, tokens)
//	RunAgent  the agent command, by its runtime; Watch follows the record beside it
//	Finish  = Verify (the parts' evidence, state checks, claim -> result.json) + Teardown

// SetUp prepares the trial's workspace and starts its hub. A hub that does not start is
// an error to try again (a fresh workspace, as a retried trial gets), except on the last
// attempt and for bad input, which no retry mends: then it is handed back as
// SetUp.HubError, with the workspace, so the trial is verified and torn down. The hub's
// details stay on this host (Running), out of the workflow's history.
func (h *Host) SetUp(ctx context.Context, in run.TrialInput, last bool) (run.SetUp, error) {
	t0 := time.Now()
	ws, err := h.PrepareWorkspace(ctx, in)
	if err != nil {
		return run.SetUp{}, err
	}
	steps := []run.Step{{Name: "worktree", Duration: time.Since(t0)}}
	t0 = time.Now()
	hub, err := h.StartHub(ctx, run.AgentInput{Trial: in, Workspace: ws})
	steps = append(steps, run.Step{Name: "proxy", Duration: time.Since(t0)})
	if err != nil {
		if !last && !IsBadInput(err) {
			return run.SetUp{}, err
		}
		return run.SetUp{Workspace: ws, HubError: err.Error(), Steps: steps}, nil
	}
	h.mu.Lock()
	if lt := h.trials[in.Key()]; lt != nil {
		lt.info = hub
	}
	h.mu.Unlock()
	return run.SetUp{Workspace: ws, Steps: steps}, nil
}

// Running is the trial this host serves under key (nil: none) and its hub's details.
// Two calls that return the same *Live saw the same hub.
func (h *Host) Running(key string) (*Live, run.HubInfo) {
	h.mu.Lock()
	defer h.mu.Unlock()
	lt := h.trials[key]
	if lt == nil {
		return nil, run.HubInfo{}
	}
	return lt, lt.info
}

// Finish verifies the trial and then tears it down (with in.CloseReason as the
// session's end). When Verify fails nothing is torn down: the caller tries again, or
// tears down on its own.
func (h *Host) Finish(ctx context.Context, in run.VerifyInput) (run.TrialResult, error) {
	t0 := time.Now()
	res, err := h.Verify(ctx, in)
	if err != nil {
		return res, err
	}
	res.Steps = append(res.Steps, run.Step{Name: "verify", Duration: time.Since(t0)})
	t0 = time.Now()
	if err := h.Teardown(ctx, run.TeardownInput{Trial: in.Trial, Workspace: in.Workspace, Reason: in.CloseReason}); err != nil {
		// As a Teardown of its own: the verdict stands, the trouble is logged.
		h.logger().Warn("teardown failed", "trial", in.Trial.Trial.ID, "error", err)
	}
	res.Steps = append(res.Steps, run.Step{Name: "teardown", Duration: time.Since(t0)})
	return res, nil
}

// Live is the trial this host serves under key, or nil.
func (h *Host) Live(key string) *Live { return h.live(key) }

// Hub is the trial's hub.
func (l *Live) Hub() *hub.Hub { return l.hub }
