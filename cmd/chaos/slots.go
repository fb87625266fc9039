package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/crashwall/chaos/worker"
)

// workersSettle is how long a run waits for the workers of its queue to be listed when
// they hold too few trials: a worker that has just started may not have polled yet.
const workersSettle = 15 * time.Second

// checkWorkers refuses (exit 1) a run of trials at once on c's task queue that the
// workers polling its trial queue cannot hold, naming them and their slots (chaos worker
// --max-trials, which each puts in its Temporal identity). A run with a worker of its own
// (c.Embedded) holds what it asks and is checked against the machine instead (connect).
func checkWorkers(ctx context.Context, c *conn, trials int) error {
	deadline := time.Now().Add(workersSettle)
	for {
		pollers, err := worker.QueueSlots(ctx, c.Client, c.TaskQueue)
		if err != nil {
			return badInput(fmt.Errorf("%w: the run cannot tell whether its workers hold %d trials at once", err, trials))
		}
		msg := worker.SlotsProblem(pollers, trials, c.TaskQueue)
		if msg == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return badInput(errors.New(msg))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}
