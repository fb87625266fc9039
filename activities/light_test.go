package activities

import (
	"testing"

	"github.com/crashwall/chaos/run"
)

// A light trial's two activities do what the folded steps do: RunWatchedAgent runs the
// agent and, as it ended on its own, verifies (the same verdict as TestFoldedSteps),
// closes the record and tears down.
func TestLightSteps(t *testing.T) {
	a, env := newActivities(t)
	a.HostQueue = "chaos@test"
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
}
