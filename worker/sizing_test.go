package worker

import (
	"testing"
	"time"
)

// TestWorkerSizing pins what a worker's size changes: a worker of up to 10 trials sends
// every heartbeat (an abort reaches its agents within a second), a large one
// sends about 20 a second in all, never fewer than one per activity each 30 s; and a
// worker always has activity slots for the agent and watcher of every trial.
func TestWorkerSizing(t *testing.T) {
	for _, c := range []struct {
		trials   int
		throttle time.Duration
		slots    int
	}{
		{1, time.Second, 1000},
		{8, time.Second, 1000},
		{10, time.Second, 1000},
		{64, 6400 * time.Millisecond, 1000},
		{100, 10 * time.Second, 1000},
		{1000, 30 * time.Second, 3000},
		{5000, 30 * time.Second, 15000},
	} {
		if got := HeartbeatThrottle(c.trials); got != c.throttle {
			t.Errorf("HeartbeatThrottle(%d) = %s, want %s", c.trials, got, c.throttle)
		}
		if got := ActivitySlots(c.trials); got != c.slots || got < 2*c.trials {
			t.Errorf("ActivitySlots(%d) = %d, want %d (at least two a trial)", c.trials, got, c.slots)
		}
	}
}
