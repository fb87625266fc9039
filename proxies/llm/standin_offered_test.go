package llm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStandinUnoffered: a tool step with an unoffered text answers that text when the
// request does not offer the tool (no tools, or others), as a real model would, and calls
// the tool when it is offered, in each API's way of listing tools; a step without one
// calls the tool whatever the request offers.
func TestStandinUnoffered(t *testing.T) {
	const refusal = "I have no tool to read the email with."
	user := `"messages": [{"role": "user", "content": "go"}]`
	input := `"input": [{"type": "message", "role": "user", "content": "go"}]`
	tests := []struct {
		name, tool, path, request, want string
	}{
		{"chat, no tools", "read_email", "/v1/chat/completions", `{"model": "m", ` + user + `}`,
			`"content":"` + refusal + `"`},
		{"chat, other tools", "read_email", "/v1/chat/completions", `{"model": "m", "tools": [{"type": "function", "function": {"name": "get_weather"}}], ` + user + `}`,
			`"content":"` + refusal + `"`},
		{"chat, offered", "read_email", "/v1/chat/completions", `{"model": "m", "tools": [{"type": "function", "function": {"name": "read_email"}}], ` + user + `}`,
			`"name":"read_email","arguments":"{}"`},
		{"responses, offered in a namespace", "mcp__chaos__read_email", "/v1/responses",
			`{"model": "m", "tools": [{"type": "namespace", "name": "mcp__chaos", "tools": [{"type": "function", "name": "read_email"}]}], ` + input + `}`,
			`"name":"read_email","namespace":"mcp__chaos"`},
		{"responses, no tools", "read_email", "/v1/responses", `{"model": "m", ` + input + `}`,
			`"text":"` + refusal + `"`},
		{"messages, offered", "read_email", "/v1/messages", `{"model": "m", "max_tokens": 10, "tools": [{"name": "read_email", "input_schema": {"type": "object"}}], ` + user + `}`,
			`"type":"tool_use","id":"toolu_standin_0","name":"read_email"`},
		{"messages, no tools", "read_email", "/v1/messages", `{"model": "m", "max_tokens": 10, ` + user + `}`,
			`"text":"` + refusal + `"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := llmStandin(t, Script{{Tool: tt.tool, Unoffered: refusal}, {Text: "Done."}})
			resp, body := llmPost(t, url+tt.path, []byte(tt.request), nil)
			if resp.StatusCode != 200 || !strings.Contains(string(body), tt.want) {
				t.Errorf("status %d, body\n%s\nwant %s", resp.StatusCode, body, tt.want)
			}
		})
	}
	// Without unoffered the step calls its tool, offered or not.
	url := llmStandin(t, Script{{Tool: "read_email"}, {Text: "Done."}})
	if _, body := llmPost(t, url+"/v1/chat/completions", []byte(`{"model": "m", `+user+`}`), nil); !strings.Contains(string(body), `"name":"read_email"`) {
		t.Errorf("a step without unoffered: %s", body)
	}
	path := filepath.Join(t.TempDir(), "s.yaml")
	os.WriteFile(path, []byte("- text: hello\n  unoffered: no"), 0o644)
	if _, err := LoadScript(path); err == nil || !strings.Contains(err.Error(), "step 1: unoffered without a tool") {
		t.Errorf("unoffered on a text step: %v", err)
	}
}
