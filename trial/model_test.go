package trial

import (
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/crashwall/chaos/proxies/httpwall"
	"github.com/crashwall/chaos/proxies/llm"
	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
)

// modelYAML is the example with a model table in front of upstream and two declared
// outcomes.
func modelYAML(t testing.TB, upstream, fault string) []byte {
	t.Helper()
	return exampleYAML(t, "faults: [all]\n", "faults: [all]\nmodel:\n  upstream: "+upstream+"\n  fault: "+fault+"\n  steps: [choose]\n"+
		"outcomes:\n  failures:\n    - {name: priority_lost, state: {key: priority, not_equals: urgent}}\n  successes:\n    - {name: says_ok, closing: \"STATUS: ok\"}\n")
}

// listTools asks the trial's wall for its tools (GET {wall_url}/tools): the agent meets
// the wall without calling a tool, as an agent set up with the wall does before its first
// model call.
func listTools(t *testing.T, hub run.HubInfo) {
	t.Helper()
	resp, err := http.Get(hub.URL + "/tools")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s/tools: %d", hub.URL, resp.StatusCode)
	}
}

// modelCall posts one Chat Completions call at position to the trial's {llm_url}.
func modelCall(t *testing.T, llmURL, position string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, llmURL+"/v1/chat/completions", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"triage"}]}`))
	req.Header.Set(llm.PositionHeader, position)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestTrialModelProxy: with model.upstream, StartHub serves the model proxy at {llm_url}
// on the trial's server, writing into the trial's record; Verify reports what it saw and
// fails the trial when the fault could not apply or no model call reached it.
func TestTrialModelProxy(t *testing.T) {
	toolCall := httptest.NewServer(llm.NewStandin(llm.Script{{When: llm.WhenStart, Tool: "update_ticket", Arguments: map[string]any{"field": "priority", "value": "urgent"}}}))
	t.Cleanup(toolCall.Close)
	text := httptest.NewServer(llm.NewStandin(llm.Script{{When: llm.WhenStart, Text: "Done."}}))
	t.Cleanup(text.Close)

	tests := []struct {
		name     string
		upstream string
		fault    string
		calls    []string // positions called
		model    run.ModelResult
		outcome  string
		reason   string
		verdict  string
	}{
		{"fault fires at its step", toolCall.URL, "tool_error_single", []string{"other", "choose"},
			run.ModelResult{Fault: "tool_error_single", Calls: 2, Fired: 1, ToolCallsAt: []string{"other"}}, run.OutcomeCompleted, "", report.Unclear},
		// A tool-call fault on a turn of text only fails the episode, and the reason says
		// the fault, the position and what the turn lacked.
		{"fault on a turn without its part", text.URL, "tool_error_single", []string{"choose"},
			run.ModelResult{Fault: "tool_error_single", Calls: 1, Failed: 1, Lacked: "tool calls", LackedAt: "choose"}, run.OutcomeFailed,
			"model fault could not apply: tool_error_single fired at choose, which needs a turn with tool calls; this turn had only text, no tool call (at 1 of 1 model calls)", report.NoVerdict},
		// No model call: the agent never met the model proxy (report.Reach), faulted or
		// clean; the trial completed, but says nothing of the agent.
		{"no model call", toolCall.URL, "tool_error_single", nil,
			run.ModelResult{Fault: "tool_error_single", NeverCalled: true}, run.OutcomeCompleted, "", report.NoVerdict},
		{"clean, no model call", toolCall.URL, "none", nil,
			run.ModelResult{Fault: "none"}, run.OutcomeCompleted, "", report.NoVerdict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, env := newHost(t)
			in := trialInput(t, modelYAML(t, tt.upstream, tt.fault), examplePath, "clean", "true")
			ws := must[run.Workspace](t, env, h.PrepareWorkspace, in)
			hub := must[run.HubInfo](t, env, h.StartHub, run.AgentInput{Trial: in, Workspace: ws})
			llmURL := hub.Tokens["llm_url"]
			if llmURL != hub.URL+httpwall.ModelPrefix {
				t.Errorf("{llm_url} = %q, want the hub's URL + %s", llmURL, httpwall.ModelPrefix)
			}
			if tt.calls != nil {
				listTools(t, hub)
			}
			for _, pos := range tt.calls {
				status, body := modelCall(t, llmURL, pos)
				if tt.model.Failed == 0 && (status != 200 || (pos == "choose") != strings.Contains(body, `"arguments":"{}"`)) {
					t.Errorf("position %s: %d %s", pos, status, body)
				}
			}
			res := must[run.TrialResult](t, env, h.Verify, run.VerifyInput{Trial: in, Workspace: ws, Agent: &run.AgentResult{}})
			if _, err := env.ExecuteActivity(h.Teardown, run.TeardownInput{Trial: in, Workspace: ws, Reason: "agent exited"}); err != nil {
				t.Fatal(err)
			}
			want := tt.model
			want.Proxy = llmURL
			if res.Model == nil || !reflect.DeepEqual(*res.Model, want) {
				t.Errorf("model %+v, want %+v", res.Model, want)
			}
			reason := strings.Replace(tt.reason, "(URL)", "("+llmURL+")", 1)
			if res.Outcome != tt.outcome || res.Reason != reason || res.Verdict != tt.verdict {
				t.Errorf("outcome %s %q, verdict %s (%s); want %s %q, %s", res.Outcome, res.Reason, res.Verdict, res.VerdictWhy, tt.outcome, reason, tt.verdict)
			}
			if tt.calls == nil {
				why := "no model call reached the model proxy"
				if tt.fault != "none" {
					why = "no model call reached the model proxy at {llm_url} (" + llmURL + "), so model fault " + tt.fault + " was never tested: point the agent's model client at {llm_url}"
				}
				if res.Unreached != report.UnreachedNoModelCall || !strings.HasPrefix(res.VerdictWhy, why) {
					t.Errorf("unreached %q, verdict why %q; want %s, %q", res.Unreached, res.VerdictWhy, report.UnreachedNoModelCall, why)
				}
			}
			// The agent never ran: the world is as it started, the closing message empty.
			if report.Scored(res.Verdict) {
				if res.Outcomes["priority_lost"] != true || res.Outcomes["says_ok"] != false || len(res.Outcomes) != 2 {
					t.Errorf("outcomes %v", res.Outcomes)
				}
			} else if res.Outcomes != nil {
				t.Errorf("outcomes %v for a trial with no verdict", res.Outcomes)
			}
		})
	}
}

// TestTrialSaysWhichFaultFired: a trial filed under a tool condition in which only the
// model fault fired says so, in faults_fired and in its verdict's reason.
func TestTrialSaysWhichFaultFired(t *testing.T) {
	toolCall := httptest.NewServer(llm.NewStandin(llm.Script{{When: llm.WhenStart, Tool: "update_ticket", Arguments: map[string]any{"field": "priority", "value": "urgent"}}}))
	t.Cleanup(toolCall.Close)
	h, env := newHost(t)
	in := trialInput(t, modelYAML(t, toolCall.URL, "tool_error_single"), examplePath, "phantom_success@update_ticket", "true")
	ws := must[run.Workspace](t, env, h.PrepareWorkspace, in)
	hub := must[run.HubInfo](t, env, h.StartHub, run.AgentInput{Trial: in, Workspace: ws})
	listTools(t, hub)
	if status, body := modelCall(t, hub.Tokens["llm_url"], "choose"); status != 200 || !strings.Contains(body, `"arguments":"{}"`) {
		t.Fatalf("the model fault did not fire: %d %s", status, body)
	}
	res := must[run.TrialResult](t, env, h.Verify, run.VerifyInput{Trial: in, Workspace: ws, Agent: &run.AgentResult{}})
	if _, err := env.ExecuteActivity(h.Teardown, run.TeardownInput{Trial: in, Workspace: ws, Reason: "agent exited"}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.FaultsFired, []string{"model:tool_error_single"}) || !report.Scored(res.Verdict) ||
		!strings.HasSuffix(res.VerdictWhy, "; only the model fault fired (tool_error_single), not phantom_success@update_ticket") {
		t.Errorf("faults fired %v, verdict %s (%s)", res.FaultsFired, res.Verdict, res.VerdictWhy)
	}
}
