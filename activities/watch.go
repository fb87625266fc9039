package activities

import (
	"context"
	"log/slog"

	"go.temporal.io/sdk/activity"

	"github.com/crashwall/chaos/run"
)

// WatchEvents follows the trial's record as the hub writes it and applies the spec's
// abort rules (trial.Host.Watch). When one is crossed it signals the trial workflow
// "abort" with the reason and returns it. It returns an empty result when it is
// cancelled or the hub closes.
//
//	hub ──rows──> Host.Watch ──rule crossed──> SignalWorkflow(trial, "abort", reason)
func (a *Activities) WatchEvents(ctx context.Context, in run.WatchInput) (run.WatchResult, error) {
	return a.watch(ctx, in, true)
}

// watch is WatchEvents; beat: heartbeat the activity (false inside RunWatchedAgent, whose
// agent loop heartbeats).
func (a *Activities) watch(ctx context.Context, in run.WatchInput, beat bool) (run.WatchResult, error) {
	var tick func(int)
	if beat {
		tick = func(calls int) { heartbeat(ctx, calls) }
	}
	reason := a.host().Watch(ctx, in.Trial, heartbeatEvery, tick)
	if reason == "" {
		return run.WatchResult{}, nil
	}
	return a.abort(ctx, a.logger().With("trial", in.Trial.Trial.ID), in.Trial, reason)
}

// abort signals the trial's workflow (its batch) to abort it (run.AbortSignalOf: the
// trial's own signal), when there is a client to do it with. The reason is returned either way, so the workflow learns it from the result too.
func (a *Activities) abort(ctx context.Context, log *slog.Logger, trial run.TrialInput, reason string) (run.WatchResult, error) {
	log.Warn("aborting the trial", "reason", reason)
	if a.Client != nil && activity.IsActivity(ctx) {
		info := activity.GetInfo(ctx)
		err := a.Client.SignalWorkflow(ctx, info.WorkflowExecution.ID, info.WorkflowExecution.RunID, run.AbortSignalOf(trial), reason)
		if err != nil {
			log.Warn("could not signal the trial to abort", "reason", reason, "error", err)
		}
	}
	return run.WatchResult{Abort: reason}, nil
}
