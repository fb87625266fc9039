package examples_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashwall/chaos/spec"
)

// TestExamplesLoad: every example spec loads as it is, and the ones made for one agent
// have no agent axis and carry the set-up that lets that agent call the wall's tools
// (docs/spec.md, "Giving the agent the wall").
func TestExamplesLoad(t *testing.T) {
	tests := []struct {
		file, profile, setup string
		oneAgent             bool
	}{
		{"support-ticket.yaml", "scripted", "{wall}", false},
		{"support-ticket-claude-code.yaml", "claude-code", "--mcp-config {mcp_config} --allowedTools mcp__chaos", true},
		{"support-ticket-codex.yaml", "codex", "-c {codex_config}", true},
		{"support-ticket-agents-sdk.yaml", "generic", "{wall_url}/mcp", true},
		{"ajantik-support-ticket.yaml", "generic", "", true},              // Ajantik's format: the agent is given after --
		{"portal/portal.yaml", "generic", "sh agents/verifying.sh", true}, // the script shim: no wall token, PATH
		{"portal/operator.yaml", "generic", "sh agents/asking.sh", true},  // the same with an operator
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			s, err := spec.Load(filepath.Join(".", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if s.Agent.Profile != tt.profile || !strings.Contains(s.Agent.Command, tt.setup) {
				t.Errorf("profile %q, command %q; want profile %q and a command with %q", s.Agent.Profile, s.Agent.Command, tt.profile, tt.setup)
			}
			ok := false
			for _, a := range s.Axes {
				ok = ok || a.Name == "agent"
			}
			if ok == tt.oneAgent {
				t.Errorf("agent axis present: %v, want %v", ok, !tt.oneAgent)
			}
		})
	}
}
