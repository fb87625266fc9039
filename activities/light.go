package activities

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/crashwall/chaos/run"
)

// A light trial (run.TrialInput.Light, workflows/trial_light.go) has no worker session:
// SetUpTrial runs on the shared task queue and hands back this worker's own queue
// (HostQueue), where RunWatchedAgent, FinishTrial and Teardown then run, next to the hub.
// A worker that dies takes its queue with it: nothing polls it any more, and the trial's
// next step times out (schedule-to-start, or RunWatchedAgent's heartbeat), which the
// workflow takes as a lost worker, as it took a failed session.

// ErrWorkerBusy is the error type of a SetUpTrial that found no free trial slot on its
// worker within slotWait: the trial workflow ends the attempt as a lost worker's, and the
// experiment runs it again (as a session that could not be created was).
const ErrWorkerBusy = "worker_busy"

// slotWait is how long SetUpTrial waits for a free slot (a session's creation timeout).
var slotWait = time.Minute

// takeSlot holds one of the worker's MaxTrials slots for the trial key (once per key: a
// retried SetUpTrial keeps its slot), waiting up to slotWait for one to be given back.
func (a *Activities) takeSlot(ctx context.Context, key string) error {
	if a.MaxTrials <= 0 {
		return nil
	}
	a.slotOnce.Do(func() { a.slots = make(chan struct{}, a.MaxTrials) })
	a.mu.Lock()
	held := a.held[key]
	a.mu.Unlock()
	if held {
		return nil
	}
	t := time.NewTimer(slotWait)
	defer t.Stop()
	select {
	case a.slots <- struct{}{}:
	case <-t.C:
		return temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("this worker already runs its %d trials at once (--max-trials)", a.MaxTrials), ErrWorkerBusy, nil)
	case <-ctx.Done():
		return ctx.Err()
	}
	a.mu.Lock()
	if a.held == nil {
		a.held = map[string]bool{}
	}
	a.held[key] = true
	a.mu.Unlock()
	return nil
}

// giveSlot gives back the slot the trial key holds, if any.
func (a *Activities) giveSlot(key string) {
	a.mu.Lock()
	held := a.held[key]
	delete(a.held, key)
	a.mu.Unlock()
	if held {
		<-a.slots
	}
}

// RunWatchedAgent is RunAgent with WatchEvents inside it, one activity instead of two:
// the watcher follows the hub's record in a goroutine of this activity and, when an
// abort rule is crossed, signals the workflow "abort" as WatchEvents does (which then
// cancels this activity). The watcher ends with the agent.
func (a *Activities) RunWatchedAgent(ctx context.Context, in run.AgentInput) (run.AgentResult, error) {
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = a.watch(wctx, run.WatchInput{Trial: in.Trial}, false)
	}()
	res, err := a.RunAgent(ctx, in)
	stop()
	<-done
	return res, err
}
