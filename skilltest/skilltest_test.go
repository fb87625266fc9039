package skilltest

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/crashwall/chaos/proxies/upstream"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/skills"
	"github.com/crashwall/chaos/spec"
)

func logOf(tools ...string) *record.Log {
	l := &record.Log{}
	for i, t := range tools {
		l.Rows = append(l.Rows, record.Row{Type: record.TypeCall, Seq: i + 2, Tool: t, Args: json.RawMessage(`{}`)})
	}
	return l
}

var classes = []upstream.Classification{
	{Tool: "read_text_file", Server: "fs", Effect: spec.EffectRead},
	{Tool: "write_file", Server: "fs", Effect: spec.EffectWrite},
	{Tool: "edit_file", Server: "fs", Effect: spec.EffectWrite},
	{Tool: "list_allowed_directories", Server: "fs", Effect: spec.EffectNone},
}

func TestNewPlan(t *testing.T) {
	for _, tc := range []struct {
		name    string
		calls   []string
		classes []upstream.Classification
		want    []string
		skipped string
	}{
		{"one read one write", []string{"read_text_file", "write_file"}, classes, []string{"clean",
			"truncated_reply@read_text_file", "premature_read@read_text_file", "stale_read@read_text_file",
			"phantom_success@write_file", "transient_error@write_file", "permanent_error@write_file", "phantom_failure@write_file"}, ""},
		{"a tool written twice drops the session", []string{"write_file", "read_text_file", "write_file"}, classes, []string{"clean",
			"phantom_success@write_file", "transient_error@write_file", "permanent_error@write_file", "phantom_failure@write_file",
			"truncated_reply@read_text_file", "premature_read@read_text_file", "stale_read@read_text_file",
			"session_drop@write_file"}, ""},
		{"two tools written once each", []string{"write_file", "edit_file"}, classes, []string{"clean",
			"phantom_success@write_file", "transient_error@write_file", "permanent_error@write_file", "phantom_failure@write_file",
			"phantom_success@edit_file", "transient_error@edit_file", "permanent_error@edit_file", "phantom_failure@edit_file"},
			"session_drop: the clean run wrote 2 times but with no tool twice"},
		{"no writer, no stale read", []string{"read_text_file"}, classes[:1], []string{"clean",
			"truncated_reply@read_text_file", "premature_read@read_text_file"}, "stale_read@read_text_file: no tool of the servers writes"},
		{"a tool of effect none gets nothing", []string{"list_allowed_directories"}, classes, []string{"clean"}, "list_allowed_directories: it neither writes nor reads back"},
		{"no calls", nil, classes, []string{"clean"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPlan(logOf(tc.calls...), tc.classes)
			if got := p.IDs(); !slices.Equal(got, tc.want) {
				t.Errorf("ids %v\nwant %v", got, tc.want)
			}
			if tc.skipped != "" && !slices.ContainsFunc(p.Skipped, func(s string) bool { return strings.HasPrefix(s, tc.skipped) }) {
				t.Errorf("skipped %q, want one beginning %q", p.Skipped, tc.skipped)
			}
		})
	}
}

func TestAllowedTools(t *testing.T) {
	tools := []spec.Tool{
		{Name: "read_text_file", Server: "fs", Remote: "read_text_file"},
		{Name: "write_file", Server: "fs", Remote: "write_file"},
		{Name: "fs_search", Server: "other", Remote: "search"},
	}
	for _, tc := range []struct {
		name    string
		allowed []string
		servers []string
		want    []string
	}{
		{"the server whole", []string{"mcp__fs", "Read"}, []string{"fs"}, []string{"Skill", "Read", "mcp__chaos__read_text_file", "mcp__chaos__write_file"}},
		{"one tool by name", []string{"mcp__fs__write_file"}, []string{"fs"}, []string{"Skill", "mcp__chaos__write_file"}},
		{"no MCP tool named: every tool of its servers", nil, []string{"fs", "other"}, []string{"Skill", "mcp__chaos__read_text_file", "mcp__chaos__write_file", "mcp__chaos__fs_search"}},
		{"a renamed tool by its remote name", []string{"mcp__other__search"}, []string{"other"}, []string{"Skill", "mcp__chaos__fs_search"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := AllowedTools(skills.Skill{AllowedTools: tc.allowed, Servers: tc.servers}, tools)
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSpec(t *testing.T) {
	inferred := `# an inference
name: skill-todo
task: mark it done
agent:
  command: claude -p {task}
  timeout: 5m
servers:
  - name: fs
    command: mcp-server-filesystem
    args: [.]
    tools:
      write_file: {effect: write}
      read_text_file: {effect: read}
`
	plan := NewPlan(logOf("read_text_file", "write_file"), classes)
	text, err := Spec(inferred, SpecOptions{
		Agent: Agent{Claude: "/bin/claude", Model: "claude-x", AllowedTools: []string{"Skill", "mcp__chaos__write_file"}, ThroughProxy: true},
		Plan:  plan, Repeat: 3, Files: []string{".claude", "todo.txt"}, Check: "./check.sh", ModelUpstream: "http://127.0.0.1:9/",
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := spec.Parse("spec.yaml", []byte(text))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if !strings.HasPrefix(text, "# an inference") {
		t.Errorf("the inferences were dropped:\n%s", text)
	}
	want := `env MCP_CONNECTION_NONBLOCKING=false ANTHROPIC_BASE_URL={llm_url} /bin/claude -p {task} --mcp-config {mcp_config} --strict-mcp-config --allowedTools Skill,mcp__chaos__write_file --output-format json --model claude-x`
	if s.Agent.Command != want {
		t.Errorf("agent command\n%s\nwant\n%s", s.Agent.Command, want)
	}
	if s.Agent.Profile != "claude-code" || s.Replicates != 3 || !slices.Equal(s.Workspace.Files, []string{".claude", "todo.txt"}) || s.Model.Upstream != "http://127.0.0.1:9/" {
		t.Errorf("profile %q, replicates %d, files %v, model upstream %q", s.Agent.Profile, s.Replicates, s.Workspace.Files, s.Model.Upstream)
	}
	if want := plan.Families(); !slices.Equal(s.Faults, want) {
		t.Errorf("faults %v, want %v", s.Faults, want)
	}
	// The families generate more than the plan: only: keeps what was planned.
	if want := plan.IDs(); !slices.Equal(s.Only, want) || len(want) < 2 {
		t.Errorf("only %v, want the plan's %v", s.Only, want)
	}
	probes := s.AllProbes()
	if len(probes) != 1 || probes[0].Kind != "command" || probes[0].Command != "./check.sh" || !probes[0].Overrules {
		t.Errorf("probes %+v, want the overruling check", probes)
	}
	// What chaos mcp's plan_skill_test shows the person (spec.WillRun): every command the
	// trials will run, the check among them, and where the model's calls go.
	will := strings.Join(s.WillRun(), "\n")
	for _, line := range []string{
		"agent (every trial, on this machine, as you): sh -c '" + want + "'",
		"server fs (started with the run and every trial, on this machine): mcp-server-filesystem .",
		"check (overrules the world verdict) (after every trial, in its sandbox, on this machine): sh -c ./check.sh",
		"model: the agent's model calls ({llm_url}) go through chaos's proxy to http://127.0.0.1:9/",
	} {
		if !strings.Contains(will, line) {
			t.Errorf("WillRun lacks %q:\n%s", line, will)
		}
	}
	// The clean run's command has no {llm_url}, which chaos record cannot fill in.
	if strings.Contains(spec.JoinCommand(Agent{ThroughProxy: true}.Argv(true)), "llm_url") {
		t.Error("the clean run's command holds {llm_url}")
	}
}
