package probes

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crashwall/chaos/spec"
)

// MCPCaller calls a tool of a real MCP server directly, by the server's own name for the
// tool: never through the wall, so no fault touches the call and nothing records it.
// upstream.Upstream is one.
type MCPCaller interface {
	CallTool(ctx context.Context, server, tool string, args map[string]any) (*mcp.CallToolResult, error)
}

// MCPCheck makes the probe's call and compares the value at its JSON path (p.Want.Key)
// with what it wants. The path reads the reply's structured content, else its text as
// JSON, else the text itself (path $). A tool error is a reply without the value (absent
// passes); a call that cannot be made gives no verdict.
func MCPCheck(ctx context.Context, caller MCPCaller, p spec.Probe) Result {
	where := fmt.Sprintf("mcp probe %s.%s", p.Server, p.Tool)
	path := p.Want.Key
	if path == "" {
		path = "$"
	}
	steps, err := parseJSONPath(path)
	if err != nil {
		return noVerdict("%s: %v", where, err)
	}
	args := map[string]any{}
	if len(p.Args) > 0 {
		if err := json.Unmarshal(p.Args, &args); err != nil {
			return noVerdict("%s: args must be a JSON object: %v", where, err)
		}
	}
	if caller == nil {
		return noVerdict("%s: the server cannot be reached", where)
	}
	res, err := caller.CallTool(ctx, p.Server, p.Tool, args)
	if err != nil {
		return noVerdict("%s: the call failed: %v", where, err)
	}
	want := p.Want
	want.Key = path
	state := map[string]any{}
	seen := ""
	if res.IsError {
		seen = "the tool answered an error: " + clip(resultText(res), 160)
	} else if v, err := lookup(ResultDoc(res), steps); err == nil {
		state[path] = v
	} else {
		seen = path + " " + err.Error()
	}
	r := StateCheck(state, want)
	r.Detail = where + ": " + r.Detail
	if seen != "" && !r.OK {
		r.Detail += " (" + seen + ")"
	}
	return r
}

// ResultDoc is what a JSON path reads in a tool result: its structured content, else
// its text as JSON, else the text itself.
func ResultDoc(res *mcp.CallToolResult) any {
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		var v any
		if err == nil && json.Unmarshal(b, &v) == nil && v != nil {
			return v
		}
	}
	return TextDoc(resultText(res))
}

// TextDoc is a reply's text as a JSON path reads it: parsed when it is JSON, else as it is.
func TextDoc(text string) any {
	var v any
	if json.Unmarshal([]byte(text), &v) == nil {
		return v
	}
	return text
}

func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// JSONPath is the value at a JSON path ($.a.b[0], $["a b"]) of doc; the error says where
// the path stopped.
func JSONPath(doc any, path string) (any, error) {
	steps, err := parseJSONPath(path)
	if err != nil {
		return nil, err
	}
	return lookup(doc, steps)
}
