package activities

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
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

// A light trial's two activities do what the folded steps do: RunWatchedAgent runs the
// agent and, as it ended on its own, verifies (the same verdict as TestFoldedSteps),
// closes the record and tears down; the trial's slot is given back.
func TestLightSteps(t *testing.T) {
	a, env := newActivities(t)
	a.MaxTrials, a.HostQueue = 1, "chaos@test"
	command := spec.ShellQuote(chaosBin) + " agent scripted --style blind --transport stdio --wall-command {wall} --spec {spec}"
	in := trialInput(t, exampleYAML(t), examplePath, "phantom_success@update_ticket", command)
	in.Light = true

	su := must[run.SetUp](t, env, a.SetUpTrial, in)
	if su.HubError != "" || su.Queue != "chaos@test" || a.live(in.Key()) == nil {
		t.Fatalf("SetUpTrial: %+v; want a live hub and the worker's queue", su)
	}
	out := must[run.WatchedAgentResult](t, env, a.RunWatchedAgent, run.AgentInput{Trial: in, Workspace: su.Workspace, Hub: su.Hub, Finish: true})
	if out.Agent.Error != "" || out.Agent.ExitCode != 0 || out.Abort != "" {
		t.Fatalf("agent: %+v", out)
	}
	if out.Result == nil {
		t.Fatal("an agent that ended on its own was not verified in its activity")
	}
	if r := out.Result; r.Outcome != run.OutcomeCompleted || r.Verdict != report.SilentWrong || r.Fired == 0 {
		t.Errorf("outcome %s, verdict %s, fired %d; want completed, %s, fired", r.Outcome, r.Verdict, r.Fired, report.SilentWrong)
	}
	l, err := record.ReadFile(filepath.Join(su.Workspace.TrialDir, "record.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if l.End == nil || l.End.Reason != "agent exited" || l.End.FinalState == nil {
		t.Errorf("the record's end %+v; want session_end \"agent exited\" with the final state", l.End)
	}
	if a.live(in.Key()) != nil {
		t.Error("the hub is still live after RunWatchedAgent finished the trial")
	}
	if n := len(a.slots); n != 0 {
		t.Errorf("%d slots held after the trial, want 0", n)
	}
}
