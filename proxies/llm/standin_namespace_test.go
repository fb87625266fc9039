package llm

import (
	"strings"
	"testing"
)

// TestStandinNamespace: a Responses API request that lists the wall's tools in a
// namespace, as Codex does (mcp__chaos), gets its calls back as the namespace's tool
// with the namespace beside it, whole and streamed, in the field order of OpenAI's
// function_call; a request without namespaces, and a name that is a top-level tool,
// keep the scripted name as it is.
func TestStandinNamespace(t *testing.T) {
	const (
		codexTools = `"tools": [{"type": "function", "name": "exec_command", "parameters": {}},
		  {"type": "namespace", "name": "multi_agent_v1", "tools": [{"type": "function", "name": "close_agent"}]},
		  {"type": "namespace", "name": "mcp__chaos", "description": "Tools in the mcp__chaos namespace.",
		   "tools": [{"type": "function", "name": "read_email"}, {"type": "function", "name": "update_ticket"}]},
		  {"type": "web_search", "external_web_access": false}]`
		input = `"input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}]`
	)
	namespaced := `{"type":"function_call","id":"fc_standin_0","call_id":"call_standin_0","name":"read_email","namespace":"mcp__chaos","arguments":"{}","status":"completed"}`
	tests := []struct {
		name, tool, request, want string
	}{
		{"server__tool", "mcp__chaos__read_email", `{"model": "m", ` + codexTools + `, ` + input + `}`, namespaced},
		{"tool alone, one namespace has it", "read_email", `{"model": "m", ` + codexTools + `, ` + input + `}`, namespaced},
		{"no namespaces in the request", "mcp__chaos__read_email", `{"model": "m", "tools": [{"type": "function", "name": "mcp__chaos__read_email"}], ` + input + `}`,
			`{"type":"function_call","id":"fc_standin_0","call_id":"call_standin_0","name":"mcp__chaos__read_email","arguments":"{}","status":"completed"}`},
		{"a top-level tool of that name", "exec_command", `{"model": "m", ` + codexTools + `, ` + input + `}`,
			`{"type":"function_call","id":"fc_standin_0","call_id":"call_standin_0","name":"exec_command","arguments":"{}","status":"completed"}`},
		{"in no namespace", "mcp__other__read_email", `{"model": "m", ` + codexTools + `, ` + input + `}`,
			`{"type":"function_call","id":"fc_standin_0","call_id":"call_standin_0","name":"mcp__other__read_email","arguments":"{}","status":"completed"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := llmStandin(t, Script{{Tool: tt.tool}, {Text: "Done."}})
			resp, body := llmPost(t, url+"/v1/responses", []byte(tt.request), nil)
			if resp.StatusCode != 200 || !strings.Contains(string(body), `"output":[`+tt.want+`]`) {
				t.Errorf("status %d, body\n%s\nwant the output [%s]", resp.StatusCode, body, tt.want)
			}
			// Streamed: the item is announced and done with its namespace.
			stream := strings.Replace(tt.request, `{"model": "m", `, `{"model": "m", "stream": true, `, 1)
			_, body = llmPost(t, url+"/v1/responses", []byte(stream), nil)
			done := `"type":"response.output_item.done","sequence_number":5,"output_index":0,"item":` + tt.want
			added := strings.Replace(strings.Replace(tt.want, `"arguments":"{}"`, `"arguments":""`, 1), `"completed"`, `"in_progress"`, 1)
			if !strings.Contains(string(body), done) || !strings.Contains(string(body), `"item":`+added) {
				t.Errorf("stream\n%s\nwant the item added as %s and done as %s", body, added, tt.want)
			}
		})
	}
	// The chat and messages APIs have no namespaces: the name stays as scripted.
	url := llmStandin(t, Script{{Tool: "mcp__chaos__read_email"}, {Text: "Done."}})
	_, body := llmPost(t, url+"/v1/chat/completions", []byte(`{"model": "m", "messages": [{"role": "user", "content": "go"}]}`), nil)
	if !strings.Contains(string(body), `"name":"mcp__chaos__read_email"`) {
		t.Errorf("chat: %s", body)
	}
}
