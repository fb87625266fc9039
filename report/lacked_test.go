package report

import (
	"strings"
	"testing"

	"github.com/crashwall/chaos/run"
)

// TestWarningsTurnLacked: trials whose model fault fired on a turn without the part it
// needs are counted apart from agents that failed, with the model.steps that would aim
// the fault at the turns of the run that had the part.
func TestWarningsTurnLacked(t *testing.T) {
	lacked := func(id string) run.TrialResult {
		return run.TrialResult{ID: id, Verdict: NoVerdict, Outcome: run.OutcomeFailed,
			VerdictWhy: "infrastructure failure: model fault could not apply: llm_truncate_single fired at call-1, which needs a turn with text; this turn had only tool calls (update_ticket), no text (at 1 of 1 model calls)",
			Model:      &run.ModelResult{Fault: "llm_truncate_single", Calls: 1, Failed: 1, Lacked: "text", LackedAt: "call-1"}}
	}
	crashed := run.TrialResult{ID: "c", Verdict: NoVerdict, Outcome: run.OutcomeFailed, VerdictWhy: "infrastructure failure: the agent crashed: boom",
		Model: &run.ModelResult{Fault: "llm_truncate_single", Calls: 3, TextAt: []string{"call-3", "call-10"}, ToolCallsAt: []string{"call-1", "call-2"}}}
	ws := Warnings([]run.TrialResult{lacked("a"), lacked("b"), crashed})
	text := strings.Join(ws, "\n")
	for _, want := range []string{
		"2 of 3 trials not scored because model fault llm_truncate_single needs a turn with text and fired on turns without (at call-1): the fault failed the episode, not the agent; model.steps: [call-3, call-10] aims it at the turns that had text in this run",
		"1 of 3 trials not scored, an infrastructure failure or a crash of the agent; the first: the agent crashed: boom",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("warnings lack %q:\n%s", want, text)
		}
	}

	ws = Warnings([]run.TrialResult{lacked("a")})
	if !strings.Contains(strings.Join(ws, "\n"), "set model.steps to positions whose turns have text") || strings.Contains(strings.Join(ws, "\n"), "crash") {
		t.Errorf("with no turn of text seen: %q", ws)
	}
}
