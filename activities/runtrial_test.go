package activities

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/tests/fixture"
)

// oneStep makes in a trial as its batch gives it (workflows/batch.go): its own abort signal.
func oneStep(in run.TrialInput) run.TrialInput {
	in.AbortSignal = run.TrialAbortSignal(in.Trial.ID)
	return in
}

// RunTrial is a whole trial in one activity: it sets the trial up, runs the agent and,
// as the agent ended on its own, verifies it (the same verdict as TestLightSteps), closes
// the record and tears down; it names what it set up, and gives the slot back.
func TestRunTrial(t *testing.T) {
	a, env := newActivities(t)
	a.HostQueue = "chaos@test"
	in := oneStep(blindPhantomTrial(t))
	out := must[run.WatchedAgentResult](t, env, a.RunTrial, in)
	if out.SetUp == nil || out.SetUp.Queue != "chaos@test" || out.SetUp.HubError != "" || out.SetUp.Workspace.TrialDir == "" {
		t.Fatalf("RunTrial's set-up: %+v; want this worker's queue and the workspace", out.SetUp)
	}
	if out.SetUp.Hub.URL != "" || out.SetUp.Hub.Command != "" {
		t.Errorf("the hub's details (tokens) left the worker: %+v", out.SetUp.Hub)
	}
	if out.Agent.Error != "" || out.Agent.ExitCode != 0 || out.Abort != "" || out.Result == nil {
		t.Fatalf("agent: %+v, result %v; want an agent that ended on its own, verified", out.Agent, out.Result)
	}
	checkFinished(t, a, in, *out.SetUp, *out.Result, "RunTrial")
	// The design's steps, named, with how long each took: all of them in the result the
	// workflow's history keeps, those before verify in result.json.
	var names []string
	for _, s := range out.Result.Steps {
		names = append(names, s.Name)
		if s.Duration <= 0 {
			t.Errorf("step %s took %s", s.Name, s.Duration)
		}
	}
	if want := []string{"worktree", "proxy", "agent", "verify", "teardown"}; strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("RunTrial's result names the steps %q, want %q", names, want)
	}
	b, err := os.ReadFile(filepath.Join(out.SetUp.Workspace.TrialDir, "result.json"))
	if err != nil || !strings.Contains(string(b), `"name": "worktree"`) || !strings.Contains(string(b), `"name": "agent"`) {
		t.Errorf("result.json has no steps: %v\n%s", err, b)
	}
}

// A RunTrial cancelled while its agent runs stops the agent and names what it set up in
// its cancel's details (the workflow finishes the trial there): the workspace, this
// worker's queue; the hub is still live for that finish.
func TestRunTrialCancelled(t *testing.T) {
	a, env := newActivities(t)
	a.HostQueue = "chaos@test"
	in := oneStep(trialInput(t, exampleYAML(t), examplePath, "clean", "echo started > started; sleep 600"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env.SetWorkerOptions(worker.Options{BackgroundActivityContext: ctx})
	done := make(chan error, 1)
	go func() {
		_, err := execute[run.WatchedAgentResult](t, env, a.RunTrial, in)
		done <- err
	}()
	var started string
	fixture.Eventually(t, "the agent to start", func() bool {
		if lt := a.host().Live(in.Key()); lt != nil {
			matches, _ := filepath.Glob(filepath.Join(a.WorkRoot, "*", "*", "started"))
			matches2, _ := filepath.Glob(filepath.Join(a.WorkRoot, "*", "started"))
			if m := append(matches, matches2...); len(m) > 0 {
				started = m[0]
				return true
			}
		}
		return false
	})
	cancel()
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Minute):
		t.Fatal("RunTrial did not return after its cancel")
	}
	var cancelled *temporal.CanceledError
	if !errors.As(err, &cancelled) || !cancelled.HasDetails() {
		t.Fatalf("RunTrial cancelled: %v; want a cancel with its set-up in the details", err)
	}
	var out run.WatchedAgentResult
	if derr := cancelled.Details(&out); derr != nil {
		t.Fatal(derr)
	}
	if out.SetUp == nil || out.SetUp.Queue != "chaos@test" || !strings.HasPrefix(started, out.SetUp.Workspace.Dir) {
		t.Fatalf("the cancel's details: %+v; want the set-up (the agent ran in %s)", out.SetUp, started)
	}
	if a.host().Live(in.Key()) == nil {
		t.Fatal("the hub is gone: the workflow could not verify the aborted trial")
	}
	if _, err := env.ExecuteActivity(a.Teardown, run.TeardownInput{Trial: in, Workspace: out.SetUp.Workspace, Reason: "aborted: test"}); err != nil {
		t.Fatal(err)
	}
}

// A RunTrial cancelled before its set-up ends leaves nothing: what it made is torn down
// (the workflow knows nothing of it), and it answers a cancel without details.
func TestRunTrialCancelledDuringSetUp(t *testing.T) {
	a, env := newActivities(t)
	in := oneStep(blindPhantomTrial(t))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	env.SetWorkerOptions(worker.Options{BackgroundActivityContext: ctx})
	_, err := execute[run.WatchedAgentResult](t, env, a.RunTrial, in)
	var cancelled *temporal.CanceledError
	if !errors.As(err, &cancelled) || cancelled.HasDetails() {
		t.Fatalf("RunTrial cancelled before it began: %v; want a cancel without details", err)
	}
	if a.host().Live(in.Key()) != nil {
		t.Error("a hub is live after a cancelled set-up")
	}
	entries, _ := os.ReadDir(a.WorkRoot)
	for _, e := range entries {
		sub, _ := os.ReadDir(filepath.Join(a.WorkRoot, e.Name()))
		if len(sub) > 0 {
			t.Errorf("left in the work root after a cancelled set-up: %s/%v", e.Name(), sub)
		}
	}
}
