package model

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentsSDKReach runs the Agents SDK agent (tests/js/agents-sdk-agent.mjs) of
// tests/model/testdata/agents-sdk.yaml with the stand-in playing a blind agent:
//
//   - as documented (the wall given as its MCP server): clean is correct and
//     phantom_success on update_ticket silent_wrong, exit 0;
//   - its tools filtered out (a tool filter naming the tools as Claude Code does,
//     mcp__chaos__<tool>, which the SDK does not: it keeps none): the agent lists the
//     wall's tools, calls none and answers that it cannot; no_verdict (no_tool_call), no
//     rate, exit 4;
//   - its MCP server not given: nothing reaches the wall; no_verdict (wall_not_reached),
//     no rate, exit 4.
//
// Without the reach rule the last two were scored reported_honestly: an agent that never
// met the wall would read as one that met it and told the truth. The same holds when a
// model fault fired on its first call (it once excused any trial without a tool call).
func TestAgentsSDKReach(t *testing.T) {
	node(t)
	standin := startStandin(t, filepath.Join(repoRoot, "tests", "model", "testdata", "agents-sdk-blind.script.yaml"))
	runs := newBlindRuns(t, agentsSpec(t), testEnv(t, "CHAOS_STANDIN_URL="+standin))
	const mcp = "--mcp-url {wall_url}/mcp -- {task}"

	t.Run("as documented", func(t *testing.T) {
		_, r := runs.wantBlind(t, runs.spec(t, "documented", mcp, mcp), "--reps", "1")
		if strings.Contains(r.Stdout, "warning:") {
			t.Errorf("warnings on a run whose agent met the wall:\n%s", r.Stdout)
		}
	})
	for _, tt := range []struct {
		name, args, unreached, says string
	}{
		{"tools filtered out", "--mcp-url {wall_url}/mcp --tools mcp__chaos__read_email,mcp__chaos__update_ticket -- {task}", "no_tool_call",
			"no_tool_call: the agent never called a tool: is the wall's server allowed?"},
		{"no MCP server given", "-- {task}", "wall_not_reached",
			"wall_not_reached: the agent never connected to the wall: give it the wall's server"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := runs.wantUnscored(t, runs.spec(t, tt.unreached, mcp, tt.args), tt.unreached, tt.says, "main                 0/0 = n/a")
			// The agent ran to its end and answered that it could not: the model was
			// reached, the wall's tools never called.
			stdout, err := os.ReadFile(filepath.Join(out, "trials", "main", "clean", "1", "stdout"))
			if err != nil || !strings.Contains(string(stdout), "I have no tools for that") {
				t.Errorf("the agent's stdout: %q (%v)", stdout, err)
			}
		})
	}
	// A model fault on the first call does not make an agent that was never given the wall
	// into a rate: it was not set up to do the task, fault or none.
	t.Run("no MCP server given, model fault on call 1", func(t *testing.T) {
		spec := runs.spec(t, "unreached-model-fault", mcp, "-- {task}", "fault: none\n  steps: [update_ticket]", "fault: llm_error_single")
		runs.wantUnscored(t, spec, "wall_not_reached",
			"wall_not_reached: the agent never connected to the wall (a model fault fired too")
	})
}
