package testkit

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPClient starts bin with args (`mcp --dir PROJECT`, `proxy serve --name N`) in env and
// connects the official MCP Go SDK client, named client, to it over stdio, as a desktop
// app would; the session is closed when the test ends.
func MCPClient(t testing.TB, ctx context.Context, client string, bin string, env []string, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cs, err := mcp.NewClient(&mcp.Implementation{Name: client, Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect an MCP client to %s %s: %v", bin, strings.Join(args, " "), err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// CallTool calls a tool of the session: "" with its structured result decoded into out
// (when out is not nil), or, when the tool refused, "error: " and the text of its result.
func CallTool(t testing.TB, ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any, out any) string {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if res.IsError {
		var text []string
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text = append(text, tc.Text)
			}
		}
		return "error: " + strings.Join(text, "\n")
	}
	if out != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: %v\n%s", tool, err, b)
		}
	}
	return ""
}
