package skill

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/tests/testkit"
)

// TestSkillTestOverMCP: the official MCP Go SDK client drives chaos mcp over stdio to test
// the skill "todo" (Claude Code from npm, offline against the stand-in playing the blind
// script, server-filesystem as its real server): list_skills finds it; plan_skill_test is
// refused without allow_real_calls (nothing run, no folder) and with an input outside the
// project; with allow_real_calls it runs the clean run and returns the plan of 8
// conditions, the estimate and a confirmation; start_run is refused without it and starts
// the run with it; run_status follows it to its end; run_results has phantom success
// silent_wrong, and the run folder says clean correct.
func TestSkillTestOverMCP(t *testing.T) {
	env, project := machine(t)
	url := standin(t, blind)
	env = append(slices.Clone(env), "ANTHROPIC_BASE_URL="+url, "PATH="+filepath.Join(testkit.JSDir(), "node_modules", ".bin")+":"+os.Getenv("PATH"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*runTimeout)
	defer cancel()
	cs := testkit.MCPClient(t, ctx, "chaos-test", chaosBin, env, "mcp", "--dir", project)

	var found struct {
		Skills []struct{ Name, Scope string }
	}
	if msg := testkit.CallTool(t, ctx, cs, "list_skills", nil, &found); msg != "" || len(found.Skills) != 1 || found.Skills[0].Name != "todo" {
		t.Fatalf("list_skills: %s %+v", msg, found)
	}
	args := map[string]any{"skill": "todo", "prompt": "Mark the first item of todo.txt as done.", "with": []string{"todo.txt"}}
	folder := filepath.Join(project, "chaos-skill-tests")
	if msg := testkit.CallTool(t, ctx, cs, "plan_skill_test", args, nil); !strings.Contains(msg, "refused: planning a skill test runs the skill once, clean, against its real MCP servers") {
		t.Errorf("plan_skill_test without allow_real_calls: %q, want a refusal", msg)
	}
	outside := map[string]any{"skill": "todo", "prompt": "x", "with": []string{"../home/.claude.json"}, "allow_real_calls": true}
	if msg := testkit.CallTool(t, ctx, cs, "plan_skill_test", outside, nil); !strings.Contains(msg, "is outside the project") {
		t.Errorf("plan_skill_test with an input outside the project: %q, want a refusal", msg)
	}
	if _, err := os.Stat(folder); err == nil {
		t.Fatal("a refused plan made the skill test's folder (the clean run ran)")
	}

	args["allow_real_calls"] = true
	var plan struct {
		Plan          string
		EstimatedCost string `json:"estimated_cost"`
		Confirmation  string
		Command       string
	}
	if msg := testkit.CallTool(t, ctx, cs, "plan_skill_test", args, &plan); msg != "" {
		t.Fatal(msg)
	}
	if got := planned(plan.Plan); len(got) != 8 || !slices.Contains(got, "phantom_success@write_file") {
		t.Errorf("planned %v, want the 8 conditions of one read and one write tool:\n%s", got, plan.Plan)
	}
	if !strings.HasPrefix(plan.EstimatedCost, "estimated cost: ") || plan.Confirmation == "" || !strings.Contains(plan.Plan, "8 trials (8 conditions x 1)") {
		t.Fatalf("plan_skill_test: %+v", plan)
	}
	// The plan ends with what the trials will run (the agent, the skill's server) and
	// where the model's calls go.
	for _, want := range []string{"Once started, the run runs these", "\n  - agent (every trial, on this machine, as you): sh -c ", "\n  - server ", "\n  - model: "} {
		if !strings.Contains(plan.Plan, want) {
			t.Errorf("the plan does not show %q:\n%s", want, plan.Plan)
		}
	}
	if runs, _ := filepath.Glob(filepath.Join(folder, "todo", "runs", "*")); len(runs) != 0 {
		t.Errorf("planning started a run: %v", runs)
	}

	for _, bad := range []map[string]any{{}, {"confirmation": "0123456789abcdef0123456789abcdef"}} {
		if msg := testkit.CallTool(t, ctx, cs, "start_run", bad, nil); !strings.Contains(msg, "refused: start_run needs the confirmation") {
			t.Errorf("start_run %v: %q, want a refusal", bad, msg)
		}
	}
	var started struct{ Run, Folder string }
	if msg := testkit.CallTool(t, ctx, cs, "start_run", map[string]any{"confirmation": plan.Confirmation}, &started); msg != "" {
		t.Fatal(msg)
	}
	if filepath.Dir(started.Folder) != filepath.Join(folder, "todo", "runs") {
		t.Errorf("the run goes to %s, want the skill test's runs folder", started.Folder)
	}
	var st struct {
		State    string
		ExitCode *int `json:"exit_code"`
		Output   string
	}
	for {
		if msg := testkit.CallTool(t, ctx, cs, "run_status", map[string]any{"run": started.Run}, &st); msg != "" {
			t.Fatal(msg)
		}
		if st.State != "running" {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the run did not end: %s", st.Output)
		case <-time.After(2 * time.Second):
		}
	}
	if st.ExitCode == nil || *st.ExitCode != 0 {
		t.Fatalf("the run ended with %v:\n%s", st.ExitCode, st.Output)
	}
	var res struct {
		Trials    int
		ByVerdict map[string]int `json:"by_verdict"`
		Folder    string
	}
	if msg := testkit.CallTool(t, ctx, cs, "run_results", map[string]any{"run": started.Run}, &res); msg != "" {
		t.Fatal(msg)
	}
	if res.Trials != 8 || res.ByVerdict["silent_wrong"] < 1 {
		t.Errorf("run_results: %+v, want 8 trials, phantom success silent_wrong", res)
	}
	got := results(t, res.Folder)
	if c := got["clean"]; len(c) != 1 || c[0].Verdict != "correct" {
		t.Errorf("clean: %+v, want correct", c)
	}
	if p := got["phantom_success@write_file"]; len(p) != 1 || p[0].Verdict != "silent_wrong" {
		t.Errorf("phantom_success@write_file: %+v, want silent_wrong", p)
	}
}
