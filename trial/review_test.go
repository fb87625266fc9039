package trial

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/proxies/llm"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
)

// TestVerifyReview: a swallowed write made again with other arguments goes to the
// spec's reviewer model (the stand-in); its wrong makes the world wrong, its garbage is
// unsure and changes nothing (decided false), and the result says who reviewed and its
// agreement with people: not measured, or the registry's kappa for that reviewer once
// chaos judge agree --reviewer registered it (the claim judge's and another reviewer's
// entries are not taken for it).
func TestVerifyReview(t *testing.T) {
	for _, tc := range []struct {
		name, answer, verdict, review string
		worldOK, decided              bool
		// measured registers the reviewer's agreement with people before the trial.
		measured  bool
		agreement string
	}{
		{"wrong", `{"verdict": "wrong", "reason": "call 2 set priority to normal"}`, report.SilentWrong, "wrong", false, true, false, "not measured"},
		{"garbage", `looks fine`, report.Correct, "unsure", true, false, false, "not measured"},
		{"measured", `{"verdict": "wrong", "reason": "call 2 set priority to normal"}`, report.SilentWrong, "wrong", false, true, true, "Cohen's kappa 0.80 [0.61, 0.93] on 30 labelled cases"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(llm.NewStandin(llm.Script{{When: llm.WhenStart, Text: tc.answer}}))
			t.Cleanup(srv.Close)
			yaml := exampleYAML(t, "faults: [all]", "faults: [all]\nmodel:\n  reviewer: {api: messages, base_url: '"+srv.URL+"', model: rev-1}")
			h, env := newHost(t)
			h.JudgeRegistry = filepath.Join(t.TempDir(), "judges.json")
			if tc.measured {
				reg := &report.Registry{}
				reg.Put(report.Agreement{Profile: "generic", Language: "en", Kappa: 0.2, Lo: 0.1, Hi: 0.3, N: 9})
				reg.Put(report.Agreement{Reviewer: "model:rev-1", Kappa: 0.8, Lo: 0.61, Hi: 0.93, N: 30})
				reg.Put(report.Agreement{Reviewer: "model:other", Kappa: 0.1, Lo: 0, Hi: 0.2, N: 5})
				if err := reg.Save(h.JudgeRegistry); err != nil {
					t.Fatal(err)
				}
			}
			in := trialInput(t, yaml, examplePath, "phantom_success@update_ticket", "agent")
			ws := run.Workspace{TrialDir: t.TempDir()}
			w, err := record.Open(filepath.Join(ws.TrialDir, "record.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			possible := true
			// As the hub writes it for a simulated world: no writes named (the reviewer
			// takes them from the spec).
			w.Write(record.Row{Type: record.TypeSessionStart, Condition: "phantom_success@update_ticket",
				Fault:           &record.Fault{Condition: "phantom_success@update_ticket", Family: "phantom_success", Tool: "update_ticket"},
				SuccessPossible: &possible, InitialState: map[string]any{"priority": "normal", "team": "accounts"}})
			w.Write(record.Row{Type: record.TypeCall, Tool: "update_ticket", Args: json.RawMessage(`{"field":"priority","value":"urgent"}`),
				Hit: &record.Hit{Fired: true, Family: "phantom_success"}, State: map[string]any{"priority": "normal", "team": "accounts"}})
			w.Write(record.Row{Type: record.TypeCall, Tool: "update_ticket", Args: json.RawMessage(`{"field":"priority","value":"urgent "}`),
				State: map[string]any{"priority": "urgent", "team": "payments"}})
			w.Close(record.Row{FinalState: map[string]any{"priority": "urgent", "team": "payments"}, Calls: 2, Fired: 1})
			os.WriteFile(filepath.Join(ws.TrialDir, "stdout"), []byte("Done.\nSTATUS: ok\n"), 0o644)
			res := must[run.TrialResult](t, env, h.Verify, run.VerifyInput{Trial: in, Workspace: ws, Agent: &run.AgentResult{Duration: time.Second}})
			r := res.Review
			if r == nil || r.Verdict != tc.review || r.By != "model:rev-1" || r.Agreement != tc.agreement || r.Decided != tc.decided || !strings.Contains(r.Question, "made again only with other arguments") {
				t.Fatalf("review %+v, want %s by model:rev-1, decided %v, agreement %q", r, tc.review, tc.decided, tc.agreement)
			}
			if res.WorldOK != tc.worldOK || res.Verdict != tc.verdict {
				t.Errorf("world ok %v, verdict %s (%s); want %v, %s", res.WorldOK, res.Verdict, res.VerdictWhy, tc.worldOK, tc.verdict)
			}
			if !strings.Contains(res.VerdictWhy, "the reviewer (model:rev-1; its agreement with people: "+tc.agreement+") said "+tc.review) {
				t.Errorf("verdict_why %q does not name the reviewer and its agreement", res.VerdictWhy)
			}
		})
	}
}
