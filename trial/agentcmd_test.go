package trial

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/crashwall/chaos/spec"
)

// TestCheckAgentExecutable: the program an agent command starts is looked for where the
// trial will look: on PATH, in the sandbox (workspace.files only), or at its absolute path.
func TestCheckAgentExecutable(t *testing.T) {
	bin := t.TempDir()
	prog := filepath.Join(bin, "my-agent")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(bin, "notes.txt")
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, command string
		ws            spec.Workspace
		want          string // a part of the error; "" for none
	}{
		{"on PATH", "my-agent --task 'x'", spec.Workspace{}, ""},
		{"after assignments and env", "FOO=1 env -i BAR=2 my-agent", spec.Workspace{}, ""},
		{"absolute", spec.ShellQuote(prog) + " run", spec.Workspace{}, ""},
		{"quoted name", `"my-agent" x`, spec.Workspace{}, ""},
		{"not on PATH", "claude-nope -p hi", spec.Workspace{}, "the agent's program claude-nope is not on PATH (" + bin + ")"},
		{"absolute, missing", "/nowhere/agent", spec.Workspace{}, "the agent's program /nowhere/agent does not exist"},
		{"absolute, not executable", plain, spec.Workspace{}, "is not an executable file"},
		{"relative, not in the sandbox", "./my-agent", spec.Workspace{}, "./my-agent is looked for in the trial's sandbox"},
		{"relative, copied in", "./tools/agent.sh", spec.Workspace{Files: []string{"tools"}}, ""},
		{"relative, a checkout", "./bin/agent", spec.Workspace{Repo: "../repo"}, ""},
		{"a variable", "$AGENT run", spec.Workspace{}, ""},
		{"a builtin", "cd /tmp && my-agent", spec.Workspace{}, ""},
		{"a subshell", "(claude-nope)", spec.Workspace{}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckAgentExecutable(tc.command, tc.ws, bin)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one with %q", err, tc.want)
			}
		})
	}
}

// TestPreviewAgentCommand: a preview is filled by the trial's own filling (quoted the same
// way), with placeholders for the port and the sandbox.
func TestPreviewAgentCommand(t *testing.T) {
	s := &spec.Spec{Tasks: []spec.Task{{ID: "t1", Prompt: "it's {done}"}}}
	got, err := PreviewAgentCommand(s, spec.TrialPlan{Task: "t1", Axes: map[string]string{"style": "blind"}},
		"agent --style {style} -p {task} --url {wall_url}/mcp --in {sandbox}", "/bin/chaos", "/s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := AgentPreview{
		Command: `agent --style "$CHAOS_AXIS_STYLE" -p "$CHAOS_TASK" --url "$CHAOS_WALL_URL"/mcp --in "$CHAOS_SANDBOX"`,
		Vars:    []string{"CHAOS_AXIS_STYLE=blind", "CHAOS_SANDBOX=SANDBOX", "CHAOS_TASK='it'\\''s {done}'", "CHAOS_WALL_URL=http://127.0.0.1:PORT"},
		Program: `agent --style "$CHAOS_AXIS_STYLE" -p "$CHAOS_TASK" --url "$CHAOS_WALL_URL"/mcp --in "$CHAOS_SANDBOX"`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	// A command that starts with a token is checked by the token's value.
	got, err = PreviewAgentCommand(s, spec.TrialPlan{Task: "t1"}, "{chaos} agent scripted", "/bin/chaos", "/s.yaml")
	if err != nil || got.Program != "/bin/chaos agent scripted" {
		t.Errorf("program %q (%v), want /bin/chaos agent scripted", got.Program, err)
	}
}
