package activities

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
)

// A light trial's slots: MaxTrials at once, a retried SetUpTrial keeps its slot, a worker
// with none free answers ErrWorkerBusy, and a slot given back is taken by the next trial.
func TestTrialSlots(t *testing.T) {
	old := slotWait
	slotWait = 50 * time.Millisecond
	defer func() { slotWait = old }()
	a := &Activities{MaxTrials: 1}
	ctx := context.Background()
	if err := a.takeSlot(ctx, "run/a"); err != nil {
		t.Fatal(err)
	}
	if err := a.takeSlot(ctx, "run/a"); err != nil {
		t.Fatalf("a retried set-up of the same trial must keep its slot: %v", err)
	}
	err := a.takeSlot(ctx, "run/b")
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != ErrWorkerBusy {
		t.Fatalf("a second trial on a worker of one slot: %v, want %s", err, ErrWorkerBusy)
	}
	got := make(chan error, 1)
	slotWait = 15 * time.Minute // a hang guard: the slot given back must end the wait
	go func() { got <- a.takeSlot(ctx, "run/b") }()
	a.giveSlot("run/b") // holds none: gives nothing back
	a.giveSlot("run/a")
	if err := <-got; err != nil {
		t.Fatalf("the slot given back was not taken: %v", err)
	}
	a.giveSlot("run/b")
	if n := len(a.slots); n != 0 {
		t.Fatalf("%d slots still held, want 0", n)
	}
}
