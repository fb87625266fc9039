package probes

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
)

// fakeServer answers every call with one result (or error) and keeps the calls.
type fakeServer struct {
	res   *mcp.CallToolResult
	err   error
	calls []string
}

func (f *fakeServer) CallTool(_ context.Context, server, tool string, args map[string]any) (*mcp.CallToolResult, error) {
	b, _ := json.Marshal(args)
	f.calls = append(f.calls, server+"."+tool+" "+string(b))
	return f.res, f.err
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func TestMCPCheck(t *testing.T) {
	graph := &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: "ignored when structured content is there"}},
		StructuredContent: map[string]any{"entities": []any{map[string]any{"name": "Alice", "observations": []any{"likes tea"}}}},
	}
	probe := func(path string, want spec.StateCheck) spec.Probe {
		want.Key = path
		return spec.Probe{Kind: "mcp", Server: "memory", Tool: "open_nodes", Args: json.RawMessage(`{"names":["Alice"]}`), Want: want}
	}
	tests := []struct {
		name   string
		server *fakeServer
		probe  spec.Probe
		ok     bool
		detail string
		noVerd string
	}{
		{"structured equals", &fakeServer{res: graph}, probe("$.entities[0].name", spec.StateCheck{Op: "equals", Equals: "Alice"}), true,
			`mcp probe memory.open_nodes: $.entities[0].name = "Alice"`, ""},
		{"structured contains", &fakeServer{res: graph}, probe("$.entities[0].observations", spec.StateCheck{Op: "contains", Contains: "likes tea"}), true,
			`mcp probe memory.open_nodes: $.entities[0].observations = ["likes tea"] (contains "likes tea")`, ""},
		{"missing element", &fakeServer{res: &mcp.CallToolResult{StructuredContent: map[string]any{"entities": []any{}}}}, probe("$.entities[0].name", spec.StateCheck{Op: "equals", Equals: "Alice"}), false,
			`mcp probe memory.open_nodes: $.entities[0].name is absent, want "Alice" ($.entities[0].name not found ($.entities has 0 elements))`, ""},
		{"absent passes", &fakeServer{res: &mcp.CallToolResult{StructuredContent: map[string]any{"entities": []any{}}}}, probe("$.entities[0]", spec.StateCheck{Op: "absent", Absent: true}), true,
			`mcp probe memory.open_nodes: $.entities[0] is absent`, ""},
		{"text as JSON", &fakeServer{res: text(`{"count": 2}`)}, probe("$.count", spec.StateCheck{Op: "equals", Equals: 2.0}), true,
			`mcp probe memory.open_nodes: $.count = 2`, ""},
		{"plain text", &fakeServer{res: text("hello world")}, probe("$", spec.StateCheck{Op: "contains", Contains: "hello"}), true,
			`mcp probe memory.open_nodes: $ = "hello world" (contains "hello")`, ""},
		{"tool error", &fakeServer{res: &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "ENOENT: no such file"}}}}, probe("$", spec.StateCheck{Op: "contains", Contains: "hello"}), false,
			`mcp probe memory.open_nodes: $ is absent, want it to contain "hello" (the tool answered an error: ENOENT: no such file)`, ""},
		{"call fails", &fakeServer{err: errors.New("connection refused")}, probe("$", spec.StateCheck{Op: "equals", Equals: "x"}), false, "",
			"mcp probe memory.open_nodes: the call failed: connection refused"},
		{"bad path", &fakeServer{res: graph}, probe("entities", spec.StateCheck{Op: "equals", Equals: "x"}), false, "",
			`mcp probe memory.open_nodes: bad JSON path "entities": it must start with $`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MCPCheck(context.Background(), tt.server, tt.probe)
			if got.OK != tt.ok || got.Detail != tt.detail || got.NoVerdict != tt.noVerd {
				t.Errorf("got %+v\nwant ok=%v detail=%q no_verdict=%q", got, tt.ok, tt.detail, tt.noVerd)
			}
			if tt.noVerd == "" && (len(tt.server.calls) != 1 || tt.server.calls[0] != `memory.open_nodes {"names":["Alice"]}`) {
				t.Errorf("calls %v", tt.server.calls)
			}
		})
	}
}

func TestSwallowedWrites(t *testing.T) {
	row := func(seq int, tool, args string, hit *record.Hit, isErr bool) record.Row {
		return record.Row{Type: record.TypeCall, Seq: seq, Tool: tool, Args: json.RawMessage(args), Hit: hit, IsError: isErr}
	}
	swallowed := &record.Hit{Fired: true, Family: "phantom_success", Performed: false}
	through := &record.Hit{Fired: false, Performed: true}
	start := record.Row{Type: record.TypeSessionStart, Writes: []string{"create_entities"}}
	tests := []struct {
		name    string
		calls   []record.Row
		applies bool
		ok      bool
		detail  string
	}{
		{"nothing swallowed", []record.Row{row(2, "create_entities", `{"a":1}`, through, false)}, false, false, ""},
		{"a read swallowed is not a write", []record.Row{row(2, "read_graph", `{}`, swallowed, false)}, false, false, ""},
		{"never made again", []record.Row{row(2, "create_entities", `{"a":1}`, swallowed, false), row(3, "read_graph", `{}`, through, false)}, true, false,
			`the wall swallowed create_entities {"a":1} (call 1) and the agent never made it again with the same arguments`},
		{"made again with other arguments", []record.Row{row(2, "create_entities", `{"a":1}`, swallowed, false), row(3, "create_entities", `{"a":2}`, through, false)}, true, false,
			`the wall swallowed create_entities {"a":1} (call 1) and the agent never made it again with the same arguments`},
		{"made again but it failed", []record.Row{row(2, "create_entities", `{"a":1}`, swallowed, false), row(3, "create_entities", `{"a":1}`, through, true)}, true, false,
			`the wall swallowed create_entities {"a":1} (call 1) and the agent never made it again with the same arguments`},
		{"made again and it went through", []record.Row{row(2, "create_entities", `{"a": 1}`, swallowed, false), row(3, "create_entities", `{"a":1}`, through, false)}, true, true,
			`the wall swallowed create_entities {"a":1} (call 1); the agent made it again and it went through`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := &record.Log{Start: &start, Rows: append([]record.Row{start}, tt.calls...)}
			got, applies := SwallowedWrites(log)
			if applies != tt.applies || got.OK != tt.ok || got.Detail != tt.detail {
				t.Errorf("got %+v applies=%v\nwant ok=%v applies=%v detail=%q", got, applies, tt.ok, tt.applies, tt.detail)
			}
		})
	}
}

func TestJSONPath(t *testing.T) {
	v, err := JSONPath(TextDoc(`{"a":[{"b":"c"}]}`), "$.a[0].b")
	if err != nil || v != "c" {
		t.Errorf("JSONPath = %v, %v", v, err)
	}
	if _, err := JSONPath(TextDoc(`{"a":[]}`), "$.a[0]"); err == nil || !strings.Contains(err.Error(), "has 0 elements") {
		t.Errorf("err = %v", err)
	}
}
