package activities

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
)

// RunTrial's steps one by one: SetUpTrial leaves a workspace and a live hub the agent
// reaches (its details kept on this worker, out of the result); FinishTrial verifies,
// closes the record and removes the sandbox.
func TestFoldedSteps(t *testing.T) {
	a, env := newActivities(t)
	in := blindPhantomTrial(t)
	su := must[run.SetUp](t, env, a.SetUpTrial, in)
	lt, info := a.host().Running(in.Key())
	if su.HubError != "" || su.Workspace.TrialDir == "" || su.Hub.URL != "" || lt == nil || info.URL == "" {
		t.Fatalf("SetUpTrial: %+v; want a workspace and a live hub whose details stay here", su)
	}
	res := must[run.AgentResult](t, env, a.RunAgent, run.AgentInput{Trial: in, Workspace: su.Workspace, Hub: info})
	if res.Error != "" || res.ExitCode != 0 {
		stderr, _ := os.ReadFile(filepath.Join(su.Workspace.TrialDir, "stderr"))
		t.Fatalf("agent: %+v\nstderr:\n%s", res, stderr)
	}
	result := must[run.TrialResult](t, env, a.FinishTrial, run.VerifyInput{Trial: in, Workspace: su.Workspace, Agent: &res, CloseReason: "agent exited"})
	checkFinished(t, a, in, su, result, "FinishTrial")
	if _, err := os.Stat(su.Workspace.Dir); !os.IsNotExist(err) {
		t.Errorf("the sandbox %s is still there after FinishTrial (%v)", su.Workspace.Dir, err)
	}
	if _, err := os.Stat(filepath.Join(su.Workspace.TrialDir, "result.json")); err != nil {
		t.Errorf("no result.json in the trial folder: %v", err)
	}
}

// blindPhantomTrial is the example's trial under phantom success, its agent the scripted
// blind one over stdio: it claims success, so the trial is silent_wrong.
func blindPhantomTrial(t *testing.T) run.TrialInput {
	t.Helper()
	command := spec.ShellQuote(chaosBin) + " agent scripted --style blind --transport stdio --wall-command {wall} --spec {spec}"
	return trialInput(t, exampleYAML(t), examplePath, "phantom_success@update_ticket", command)
}

// checkFinished checks what finishing blindPhantomTrial leaves, whichever step did it
// (finisher): the trial completed, silent_wrong, its fault fired; the record closed
// "agent exited" with the final state; the hub no longer live.
func checkFinished(t *testing.T, a *Activities, in run.TrialInput, su run.SetUp, r run.TrialResult, finisher string) {
	t.Helper()
	if r.Outcome != run.OutcomeCompleted || r.Verdict != report.SilentWrong || r.Fired == 0 {
		t.Errorf("outcome %s, verdict %s, fired %d; want completed, %s, fired", r.Outcome, r.Verdict, r.Fired, report.SilentWrong)
	}
	l, err := record.ReadFile(filepath.Join(su.Workspace.TrialDir, "record.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if l.End == nil || l.End.Reason != "agent exited" || l.End.FinalState == nil {
		t.Errorf("the record's end %+v; want session_end \"agent exited\" with the final state", l.End)
	}
	if a.host().Live(in.Key()) != nil {
		t.Errorf("the hub is still live after %s", finisher)
	}
}

// A hub refused as bad input is handed back at once with the workspace, so the trial can
// be verified as failed and torn down.
func TestSetUpTrialHubError(t *testing.T) {
	a, env := newActivities(t)
	in := trialInput(t, exampleYAML(t), examplePath, "clean", "agent")
	in.Trial.Condition = "phantom_sucess@update_ticket"
	su := must[run.SetUp](t, env, a.SetUpTrial, in)
	if !strings.Contains(su.HubError, `unknown condition "phantom_sucess@update_ticket"`) || su.Workspace.Dir == "" || su.Hub.URL != "" {
		t.Fatalf("SetUpTrial: %+v; want the workspace and the hub's error", su)
	}
	if a.host().Live(in.Key()) != nil {
		t.Error("a hub was kept after a failed start")
	}
	if _, err := os.Stat(su.Workspace.Dir); err != nil {
		t.Errorf("the sandbox is gone before Teardown: %v", err)
	}
	if _, err := env.ExecuteActivity(a.Teardown, run.TeardownInput{Trial: in, Workspace: su.Workspace, Reason: "start hub failed"}); err != nil {
		t.Fatal(err)
	}
}
