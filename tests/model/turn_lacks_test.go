package model

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTextFaultOnToolCallTurn: the Agents SDK agent under llm_truncate_single, whose
// first turn (position read_email, the agent declares it) is a tool call with no text. The fault keeps its rule (a target
// missing from the response fails the episode): the client gets the 502, the trial is
// no_verdict with a reason that names the fault, the position and what the turn lacked,
// result.json keeps the part it lacked, and the run's warnings count it apart from agents
// that failed, saying how model.steps would aim it.
func TestTextFaultOnToolCallTurn(t *testing.T) {
	node(t)
	standin := startStandin(t, filepath.Join(repoRoot, "tests", "model", "testdata", "agents-sdk-blind.script.yaml"))
	runs := newBlindRuns(t, agentsSpec(t), testEnv(t, "CHAOS_STANDIN_URL="+standin))
	const mcp = "--mcp-url {wall_url}/mcp -- {task}"
	spec := runs.spec(t, "truncate", mcp, mcp, "fault: none\n  steps: [update_ticket]", "fault: llm_truncate_single")
	out := filepath.Join(runs.dir, "run-truncate")
	r := runChaos(t, runs.env, runTimeout, "run", spec, "--only", "clean", "--reps", "1", "--data-dir", runs.data, "--out", out)
	if r.Code != 4 {
		t.Fatalf("exit %d, want 4 (no trial scored)\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	var res struct {
		Verdict, Reason string
		Model           struct {
			Lacked   string `json:"lacked"`
			LackedAt string `json:"lacked_at"`
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "trials", "main", "clean", "1", "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(b, &res)
	why := "model fault could not apply: llm_truncate_single fired at read_email, which needs a turn with text; this turn had only tool calls (read_email), no text"
	if res.Verdict != "no_verdict" || !strings.HasPrefix(res.Reason, why) || res.Model.Lacked != "text" || res.Model.LackedAt != "read_email" {
		t.Errorf("result: %s %q, model lacked %q at %q; want no_verdict %q..., text at read_email", res.Verdict, res.Reason, res.Model.Lacked, res.Model.LackedAt, why)
	}
	warn := "1 of 1 trials not scored because model fault llm_truncate_single needs a turn with text and fired on turns without (at read_email): the fault failed the episode, not the agent; set model.steps to positions whose turns have text"
	if !strings.Contains(r.Stdout, warn) {
		t.Errorf("the console does not say %q:\n%s", warn, r.Stdout)
	}
	if strings.Contains(r.Stdout, "a crash of the agent") {
		t.Errorf("the console counts the trial with agents that failed:\n%s", r.Stdout)
	}
}
