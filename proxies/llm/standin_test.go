package llm

import (
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/crashwall/chaos/faults"
)

func TestStandinLoadScript(t *testing.T) {
	s, err := LoadScript(filepath.Join("testdata", "support-ticket.script.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := Script{
		{When: WhenStart, Tool: "read_email"},
		{When: WhenToolResult, Tool: "update_ticket", Arguments: map[string]any{"field": "priority", "value": "urgent"}},
		{When: WhenToolResult, Tool: "update_ticket", Arguments: map[string]any{"field": "team", "value": "payments"}},
		{When: WhenToolResult, Text: "Done. Priority urgent, team payments."},
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("got %#v", s)
	}
}

func TestStandinScriptErrors(t *testing.T) {
	tests := []struct{ script, want string }{
		{"[]", "the script has no steps"},
		{"- when: later\n  tool: x", `step 1: when is "later"; it must be start or tool_result`},
		{"- tool: x\n- {}", "step 2: a step calls a tool (tool:) or answers a text (text:)"},
		{"- tool: x\n  text: y", "step 1: a step calls a tool or answers a text, not both"},
		{"- text: y\n  arguments: {a: 1}", "step 1: arguments without a tool"},
		{"- tool: [x", "yaml"},
		{`[{"tool": "x", "arguments": {"a": 1}}, {"text": "ok"}]`, ""}, // JSON is YAML
	}
	for _, tt := range tests {
		path := filepath.Join(t.TempDir(), "s.yaml")
		os.WriteFile(path, []byte(tt.script), 0o644)
		_, err := LoadScript(path)
		if tt.want == "" {
			if err != nil {
				t.Errorf("%q: %v", tt.script, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), path+": ") {
			t.Errorf("%q: got %v, want %q after the path", tt.script, err, tt.want)
		}
	}
	if _, err := LoadScript(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Error("a missing file loaded")
	}

	url := llmStandin(t, Script{{Tool: "x", Text: "y"}})
	resp, body := llmPost(t, url+"/v1/messages", llmRequest(messagesAPI{}, 0, false), nil)
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(body), "not both") {
		t.Errorf("an invalid script answered %d %s", resp.StatusCode, body)
	}
}

// TestStandinConversation: each API, streamed and not, walks the script: the first
// tool call for the user's request, the next step after each run of tool results,
// the text at the end, and says so when the script has run out.
func TestStandinConversation(t *testing.T) {
	url := llmStandin(t, llmScript(t, ""))
	for _, a := range llmAPIs {
		want := []faults.ModelMessage{
			{ToolCalls: []faults.ToolCall{{ID: a.api.callID(0), Name: "read_email", Arguments: "{}"}}, FinishReason: faults.FinishToolCalls},
			{ToolCalls: []faults.ToolCall{{ID: a.api.callID(1), Name: "update_ticket", Arguments: `{"field":"priority","value":"urgent"}`}}, FinishReason: faults.FinishToolCalls},
			{ToolCalls: []faults.ToolCall{{ID: a.api.callID(2), Name: "update_ticket", Arguments: `{"field":"team","value":"payments"}`}}, FinishReason: faults.FinishToolCalls},
			{Text: "Done. Priority urgent, team payments.", FinishReason: faults.FinishStop},
			{Text: "[stand-in model] the script has no step after 4 tool results.", FinishReason: faults.FinishStop},
		}
		for _, stream := range []bool{false, true} {
			for results, w := range want {
				resp, body := llmPost(t, url+a.path, llmRequest(a.api, results, stream), nil)
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("%s turn %d: %d %s", a.api.Name(), results, resp.StatusCode, body)
				}
				if isEventStream(resp.Header) != stream {
					t.Errorf("%s turn %d stream=%v: content type %s", a.api.Name(), results, stream, resp.Header.Get("Content-Type"))
				}
				if got := llmMessage(t, a.api, resp, body); !reflect.DeepEqual(got, w) {
					t.Errorf("%s turn %d stream=%v:\n got %#v\nwant %#v", a.api.Name(), results, stream, got, w)
				}
				// The same conversation gets the same bytes.
				if _, again := llmPost(t, url+a.path, llmRequest(a.api, results, stream), nil); string(again) != string(body) {
					t.Errorf("%s turn %d stream=%v: two answers differ", a.api.Name(), results, stream)
				}
			}
		}
	}
}

// TestStandinStreamMatches: a streamed answer assembles into the answer given
// unstreamed (apart from usage, which counts the request).
func TestStandinStreamMatches(t *testing.T) {
	url := llmStandin(t, llmScript(t, llmGoldenText))
	for _, a := range llmAPIs {
		for _, results := range []int{0, 3} {
			_, plain := llmPost(t, url+a.path, llmRequest(a.api, results, false), nil)
			resp, streamed := llmPost(t, url+a.path, llmRequest(a.api, results, true), nil)
			events := parseSSE(streamed)
			if len(events) < 4 {
				t.Errorf("%s turn %d: only %d events", a.api.Name(), results, len(events))
			}
			if !isEventStream(resp.Header) {
				t.Fatalf("%s: content type %s", a.api.Name(), resp.Header.Get("Content-Type"))
			}
			whole, err := a.api.assemble(events)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := parseObject(plain)
			whole.del("usage")
			want.del("usage")
			if got, w := string(encodeJSON(whole)), string(encodeJSON(want)); got != w {
				t.Errorf("%s turn %d: streamed\n%s\nplain\n%s", a.api.Name(), results, got, w)
			}
		}
	}
}

// TestStandinPreviousResponse: with the Responses API's server-side state, the
// request carries only the tool result; the stand-in counts from the response it
// continues.
func TestStandinPreviousResponse(t *testing.T) {
	url := llmStandin(t, llmScript(t, ""))
	api := responsesAPI{}
	_, body := llmPost(t, url+"/v1/responses", llmRequest(api, 1, false), nil)
	first, _ := parseObject(body)
	req := obj("model", "gpt-test", "previous_response_id", first.str("id"), "input", []any{
		obj("type", "function_call_output", "call_id", api.callID(1), "output", `{"status": "updated"}`)})
	resp, body := llmPost(t, url+"/v1/responses", encodeJSON(req), nil)
	got := llmMessage(t, api, resp, body)
	want := faults.ModelMessage{ToolCalls: []faults.ToolCall{{ID: api.callID(2), Name: "update_ticket", Arguments: `{"field":"team","value":"payments"}`}}, FinishReason: faults.FinishToolCalls}
	if first.str("id") != "resp_standin_1" || !reflect.DeepEqual(got, want) {
		t.Errorf("continuing %s: got %#v", first.str("id"), got)
	}
}

func TestStandinOtherPaths(t *testing.T) {
	url := llmStandin(t, llmScript(t, ""))
	for _, c := range []struct{ method, path string }{{"GET", "/v1/models"}, {"GET", "/v1/chat/completions"}, {"POST", "/v1/embeddings"}} {
		req, _ := http.NewRequest(c.method, url+c.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s %s: %d", c.method, c.path, resp.StatusCode)
		}
	}
	resp, body := llmPost(t, url+"/v1/messages", []byte("not json"), nil)
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a body that is not JSON: %d %s", resp.StatusCode, body)
	}
}

// TestStandinDefaultWhen: steps without when: the first answers the user, the others
// tool results; a script that starts with text still calls its first tool first.
func TestStandinDefaultWhen(t *testing.T) {
	url := llmStandin(t, Script{{Text: "Hello."}, {Tool: "read_email"}, {Text: "Bye."}})
	api := chatAPI{}
	for results, want := range []string{"Hello.", "read_email", "Bye."} {
		resp, body := llmPost(t, url+"/v1/chat/completions", llmRequest(api, results, false), nil)
		m := llmMessage(t, api, resp, body)
		got := m.Text
		if len(m.ToolCalls) > 0 {
			got = m.ToolCalls[0].Name
		}
		if got != want {
			t.Errorf("after %d results: %q, want %q", results, got, want)
		}
	}
	url = llmStandin(t, Script{{When: WhenToolResult, Text: "after"}, {When: WhenToolResult, Tool: "read_email"}})
	resp, body := llmPost(t, url+"/v1/chat/completions", llmRequest(api, 0, false), nil)
	if m := llmMessage(t, api, resp, body); len(m.ToolCalls) != 1 || m.ToolCalls[0].Name != "read_email" {
		t.Errorf("no start step: got %#v, want the first tool call", m)
	}
}
