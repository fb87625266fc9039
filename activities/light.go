package activities

import (
	"context"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/crashwall/chaos/run"
)

// A trial (workflows/trial.go) runs as RunTrial on whichever worker takes it from the trial
// queue; what RunTrial does not finish, FinishTrial and Teardown finish on this worker's
// own queue (HostQueue), next to the hub. A worker that dies takes its queue with it:
// nothing polls it any more, and the trial's next step times out (schedule-to-start, or
// RunTrial's heartbeat), which the workflow takes as a lost worker.

// RunWatchedAgent is RunAgent with WatchEvents inside it, one activity instead of two:
// the watcher follows the hub's record in a goroutine of this activity and, when an
// abort rule is crossed, signals the workflow "abort" as WatchEvents does (which then
// cancels this activity); the reason is in the result too. The watcher ends with the
// agent.
//
// With in.Finish, an agent that ended on its own (not cancelled, no abort asked) is
// verified and torn down here, as FinishTrial would (the close reason and failure the
// workflow would give it), saving the workflow a round trip: the verdict is in
// Result. A Verify that fails leaves Result nil, and the workflow runs FinishTrial.
func (a *Activities) RunWatchedAgent(ctx context.Context, in run.AgentInput) (run.WatchedAgentResult, error) {
	lt, info := a.host().Running(in.Trial.Key())
	if in.Hub.URL == "" && in.Hub.Command == "" && lt != nil {
		// Its set-up left them here (SetUpTrial), out of the workflow's history.
		in.Hub = info
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	var w run.WatchResult
	go func() {
		defer close(done)
		w, _ = a.watch(wctx, run.WatchInput{Trial: in.Trial}, false)
	}()
	paused := pauseDetector(wctx)
	res, err := a.RunAgent(ctx, in)
	stop()
	<-done
	out := run.WatchedAgentResult{Agent: res, Abort: w.Abort}
	if err != nil || !in.Finish || w.Abort != "" || ctx.Err() != nil {
		return out, err
	}
	// A process that stood still (stopped, starved) for half the heartbeat timeout may
	// have had its attempt declared lost meanwhile, and the trial run again: only the
	// workflow knows, so it finishes the trial, if the attempt is still its. The same
	// for a hub that is not the one this agent ran against (a new attempt's, here).
	if hb := heartbeatTimeoutOf(ctx); paused() > hb/2 || lt == nil || a.host().Live(in.Trial.Key()) != lt {
		return out, nil
	}
	v := run.VerifyInput{Trial: in.Trial, Workspace: in.Workspace, Agent: &res,
		Steps: append(append([]run.Step(nil), in.Steps...), run.Step{Name: "agent", Duration: res.Duration})}
	v.CloseReason, v.Failure = res.Ending()
	r, verr := a.FinishTrial(ctx, v)
	if verr != nil {
		a.logger().Warn("verify failed in the agent's activity; the workflow runs it again", "trial", in.Trial.Trial.ID, "error", verr)
		return out, nil
	}
	out.Result = &r
	return out, nil
}

// heartbeatTimeoutOf is the activity's heartbeat timeout (10s outside an activity, or
// when it has none).
func heartbeatTimeoutOf(ctx context.Context) time.Duration {
	if activity.IsActivity(ctx) {
		if hb := activity.GetInfo(ctx).HeartbeatTimeout; hb > 0 {
			return hb
		}
	}
	return 10 * time.Second
}

// pauseDetector ticks every pauseTick until ctx ends; the returned func is the longest
// gap seen between two ticks beyond pauseTick: how long this process stood still.
func pauseDetector(ctx context.Context) func() time.Duration {
	var mu sync.Mutex
	var worst time.Duration
	last := time.Now()
	note := func(now time.Time) {
		mu.Lock()
		if gap := now.Sub(last) - pauseTick; gap > worst {
			worst = gap
		}
		last = now
		mu.Unlock()
	}
	go func() {
		t := time.NewTicker(pauseTick)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				note(now)
			}
		}
	}()
	return func() time.Duration {
		note(time.Now())
		mu.Lock()
		defer mu.Unlock()
		return worst
	}
}

const pauseTick = 500 * time.Millisecond
