// Package mcp tests chaos mcp, chaos as an MCP server, driven by the official MCP Go SDK's
// client over stdio, and chaos skill list, against a home and a project of their own.
package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/tests/chaosbin"
	"github.com/crashwall/chaos/tests/testkit"
)

var (
	repoRoot = chaosbin.Root()
	chaosBin string
)

func TestMain(m *testing.M) {
	os.Exit(testkit.Main(m, "tests/mcp", func(bin string) { chaosBin = bin }))
}

// write writes text to path, making its folder first.
func write(t *testing.T, path, text string) { testkit.WriteFile(t, path, text) }

// machine is a home with a user skill and a user MCP server (wrapped by chaos proxy, with
// a secret written in its env), and a project with a skill, a server and a spec: the
// support-ticket example with its phantom-success fault only (4 trials).
func machine(t *testing.T) (env []string, project string) {
	t.Helper()
	env, tmp := testkit.EnvDir(t)
	home := filepath.Join(tmp, "home")
	project = filepath.Join(tmp, "project")
	write(t, filepath.Join(home, ".claude", "skills", "notes", "SKILL.md"), "---\nname: notes\ndescription: Keeps notes in the memory server.\nallowed-tools: [mcp__memory__create_entities]\n---\nUse the memory server.\n")
	write(t, filepath.Join(tmp, "data", "chaos", "proxy", "servers", "memory.json"), `{"name": "memory", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}`)
	write(t, filepath.Join(home, ".claude.json"), `{"mcpServers": {"memory": {"command": "`+chaosBin+`", "args": ["proxy", "serve", "--name", "memory"], "env": {"MEMORY_FILE_PATH": "/very/secret/path.json"}}}}`)
	write(t, filepath.Join(project, ".claude", "skills", "triage", "SKILL.md"), "---\ndescription: Triage support tickets.\n---\n")
	write(t, filepath.Join(project, ".mcp.json"), `{"mcpServers": {"tickets": {"type": "http", "url": "https://tickets.example/mcp", "headers": {"Authorization": "Bearer tk-secret-42"}}}}`)
	b, err := os.ReadFile(filepath.Join(repoRoot, "examples", "support-ticket.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	example := strings.Replace(string(b), "faults: [all]", "faults: [phantom_success]", 1)
	if !strings.Contains(example, "faults: [phantom_success]") {
		t.Fatal("the example's faults line moved")
	}
	write(t, filepath.Join(project, "specs", "support-ticket.yaml"), example)
	return append(env, "HOME="+home), project
}

// TestSkillList: chaos skill list finds the user's and the project's skills and servers,
// shows the real server behind chaos proxy, and never a value written in the configuration.
func TestSkillList(t *testing.T) {
	env, project := machine(t)
	r := testkit.Run(t, chaosBin, env, time.Minute, "skill", "list", "--project", project)
	r.MustSucceed(t, "chaos skill list")
	for _, want := range []string{"notes", "user", "memory", "triage", "project", "tickets",
		"npx -y @modelcontextprotocol/server-memory", "unwrapped from:", "Authorization=${TICKETS_AUTHORIZATION}", "MEMORY_FILE_PATH=${MEMORY_MEMORY_FILE_PATH}"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("chaos skill list lacks %q:\n%s", want, r.Stdout)
		}
	}
	for _, secret := range []string{"tk-secret-42", "/very/secret"} {
		if strings.Contains(r.Stdout+r.Stderr, secret) {
			t.Errorf("chaos skill list shows %q:\n%s", secret, r.Stdout)
		}
	}
}

// TestMCPServer: the official MCP Go SDK client starts chaos mcp over stdio and lists the
// skills and specs, plans a run (its plan, cost line and confirmation), is refused a start
// without the confirmation (none, a made-up one), starts it with the confirmation (which
// then cannot start a second run), follows its status until it finishes, and reads its
// results: the blind agent silent_wrong on the phantom success.
func TestMCPServer(t *testing.T) {
	env, project := machine(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cs := testkit.MCPClient(t, ctx, "chaos-test", chaosBin, env, "mcp", "--dir", project)

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if got := strings.Join(names, ","); got != "list_skills,list_specs,plan_run,plan_skill_test,run_results,run_status,start_run" {
		t.Errorf("tools %s", got)
	}

	var found struct {
		Skills  []struct{ Name, Scope string }
		Servers []struct {
			Name, Command string
			Headers       map[string]string
		}
	}
	if msg := testkit.CallTool(t, ctx, cs, "list_skills", nil, &found); msg != "" {
		t.Fatal(msg)
	}
	if len(found.Skills) != 2 || len(found.Servers) != 2 || found.Servers[0].Command != "npx" || found.Servers[1].Headers["Authorization"] != "${TICKETS_AUTHORIZATION}" {
		t.Errorf("list_skills: %+v", found)
	}

	var specs struct{ Specs []struct{ Path, Name string } }
	if msg := testkit.CallTool(t, ctx, cs, "list_specs", nil, &specs); msg != "" {
		t.Fatal(msg)
	}
	if len(specs.Specs) != 1 || specs.Specs[0].Name != "support-ticket" {
		t.Fatalf("list_specs: %+v", specs)
	}

	var plan struct {
		Plan          string
		EstimatedCost string `json:"estimated_cost"`
		Confirmation  string
	}
	if msg := testkit.CallTool(t, ctx, cs, "plan_run", map[string]any{"spec": "specs/support-ticket.yaml"}, &plan); msg != "" {
		t.Fatal(msg)
	}
	if !strings.Contains(plan.Plan, "4 trials") || plan.Confirmation == "" || !strings.HasPrefix(plan.EstimatedCost, "estimated cost: unknown") {
		t.Fatalf("plan_run: %+v", plan)
	}

	for _, bad := range []map[string]any{{}, {"confirmation": "0123456789abcdef0123456789abcdef"}} {
		if msg := testkit.CallTool(t, ctx, cs, "start_run", bad, nil); !strings.Contains(msg, "refused: start_run needs the confirmation plan_run returned") {
			t.Errorf("start_run %v: %q, want a refusal", bad, msg)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(project, "chaos-runs")); len(entries) != 0 {
		t.Errorf("a refused start left %d entries in chaos-runs", len(entries))
	}

	var started struct{ Run, Folder string }
	if msg := testkit.CallTool(t, ctx, cs, "start_run", map[string]any{"confirmation": plan.Confirmation}, &started); msg != "" {
		t.Fatal(msg)
	}
	if msg := testkit.CallTool(t, ctx, cs, "start_run", map[string]any{"confirmation": plan.Confirmation}, nil); !strings.Contains(msg, "refused") {
		t.Errorf("a confirmation started a second run: %q", msg)
	}

	var st struct {
		State    string
		ExitCode *int `json:"exit_code"`
		Output   string
	}
	sawRunning := false
	for {
		if msg := testkit.CallTool(t, ctx, cs, "run_status", map[string]any{"run": started.Run}, &st); msg != "" {
			t.Fatal(msg)
		}
		if st.State != "running" {
			break
		}
		sawRunning = true
		// Results are refused while the run runs; one that ended in between has results,
		// and the status then says so.
		if msg := testkit.CallTool(t, ctx, cs, "run_results", map[string]any{"run": started.Run}, nil); msg == "" {
			continue
		} else if !strings.Contains(msg, "still running") {
			t.Errorf("run_results of a running run: %q", msg)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the run did not finish: %+v", st)
		case <-time.After(time.Second):
		}
	}
	if !sawRunning || st.State != "finished" || st.ExitCode == nil || *st.ExitCode != 0 {
		t.Fatalf("status %+v (seen running: %v)", st, sawRunning)
	}

	var res struct {
		Trials    int
		ByVerdict map[string]int `json:"by_verdict"`
		Summary   string
	}
	if msg := testkit.CallTool(t, ctx, cs, "run_results", map[string]any{"run": started.Run}, &res); msg != "" {
		t.Fatal(msg)
	}
	if res.Trials != 4 || res.ByVerdict["silent_wrong"] < 1 || !strings.Contains(res.Summary, "phantom_success@update_ticket") {
		t.Errorf("run_results: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(started.Folder, "report.html")); err != nil {
		t.Errorf("the run folder has no report: %v", err)
	}
}
