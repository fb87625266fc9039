package model

import (
	"testing"
)

// TestClaudeCode runs Claude Code (the @anthropic-ai/claude-code npm package, offline
// against the stand-in model through ANTHROPIC_BASE_URL) as the agent of
// examples/support-ticket-claude-code.yaml, with the stand-in playing a blind agent:
//
//   - as documented (--allowedTools mcp__chaos): clean is correct, phantom_success on
//     update_ticket is silent_wrong, exit 0;
//   - with its tools blocked (no --allowedTools: claude -p refuses them and lists the
//     refusals under permission_denials): no_verdict (tools_refused) with what to change,
//     no rate, exit 4.
func TestClaudeCode(t *testing.T) {
	claude, standin, runs := clientRuns(t, "claude", "claude-code.script.yaml", "support-ticket-claude-code.yaml")
	// The example as a user would run it, with claude from tests/js, a home of its own
	// and the stand-in as its model.
	spec := func(name string, more ...string) string {
		return runs.spec(t, name, append([]string{
			"command: claude ", "command: " + claude + " ",
			"faults: [all]", "faults: [phantom_success]",
			"  env: {", "  env: {HOME: " + runs.home(t, name) + ", ANTHROPIC_BASE_URL: '" + standin + "', ANTHROPIC_API_KEY: sk-ant-standin, DISABLE_TELEMETRY: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', ",
		}, more...)...)
	}
	t.Run("as documented", func(t *testing.T) {
		runs.wantBlind(t, spec("allowed"))
	})
	t.Run("tools blocked", func(t *testing.T) {
		runs.wantUnscored(t, spec("blocked", "--mcp-config {mcp_config} --allowedTools mcp__chaos", "--mcp-config {mcp_config}"),
			"tools_refused", "For Claude Code add --allowedTools mcp__chaos")
	})
}
