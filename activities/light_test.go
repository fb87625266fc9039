package activities

import (
	"context"
	"errors"
	"testing"

	"github.com/crashwall/chaos/run"
)

// A two-step trial's slots: MaxTrials at once, a retried SetUpTrial keeps its slot, a
// trial that finds none free waits for one (it is never failed for the wait: only its
// context ends the wait), and a slot given back is taken by the trial waiting.
func TestTrialSlots(t *testing.T) {
	a := &Activities{MaxTrials: 1}
	ctx := context.Background()
	if err := a.takeSlot(ctx, "run/a"); err != nil {
		t.Fatal(err)
	}
	if err := a.takeSlot(ctx, "run/a"); err != nil {
		t.Fatalf("a retried set-up of the same trial must keep its slot: %v", err)
	}
	// A trial whose activity is cancelled while it waits gets the cancel, nothing else.
	cctx, cancel := context.WithCancel(ctx)
	cancelled := make(chan error, 1)
	go func() { cancelled <- a.takeSlot(cctx, "run/c") }()
	got := make(chan error, 1)
	go func() { got <- a.takeSlot(ctx, "run/b") }()
	cancel()
	if err := <-cancelled; !errors.Is(err, context.Canceled) {
		t.Fatalf("a wait for a slot ended by a cancel: %v, want context.Canceled", err)
	}
	select {
	case err := <-got:
		t.Fatalf("a second trial on a worker of one slot did not wait: %v", err)
	default:
	}
	a.giveSlot("run/c") // holds none: gives nothing back
	a.giveSlot("run/a")
	if err := <-got; err != nil {
		t.Fatalf("the slot given back was not taken: %v", err)
	}
	a.giveSlot("run/b")
	if n := len(a.slots); n != 0 {
		t.Fatalf("%d slots still held, want 0", n)
	}
}

// A light trial's two activities do what the folded steps do: RunWatchedAgent runs the
// agent and, as it ended on its own, verifies (the same verdict as TestFoldedSteps),
// closes the record and tears down; the trial's slot is given back.
func TestLightSteps(t *testing.T) {
	a, env := newActivities(t)
	a.MaxTrials, a.HostQueue = 1, "chaos@test"
	in := blindPhantomTrial(t)

	su := must[run.SetUp](t, env, a.SetUpTrial, in)
	if su.HubError != "" || su.Queue != "chaos@test" || a.host().Live(in.Key()) == nil {
		t.Fatalf("SetUpTrial: %+v; want a live hub and the worker's queue", su)
	}
	out := must[run.WatchedAgentResult](t, env, a.RunWatchedAgent, run.AgentInput{Trial: in, Workspace: su.Workspace, Hub: su.Hub, Finish: true})
	if out.Agent.Error != "" || out.Agent.ExitCode != 0 || out.Abort != "" {
		t.Fatalf("agent: %+v", out)
	}
	if out.Result == nil {
		t.Fatal("an agent that ended on its own was not verified in its activity")
	}
	checkFinished(t, a, in, su, *out.Result, "RunWatchedAgent finished the trial")
	if n := len(a.slots); n != 0 {
		t.Errorf("%d slots held after the trial, want 0", n)
	}
}
