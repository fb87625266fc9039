// Package stdio is the wall an agent starts as a process and speaks MCP to on its stdin
// and stdout. It is the hub served on stdio, the bridge from stdio to a hub's HTTP server
// (`chaos wall --hub URL`), and the unix socket the relay (cmd/chaos-relay) connects a
// trial's agent to; with the {wall}, {mcp_config} and {codex_config} tokens that start them.
package stdio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crashwall/chaos/proxies/httpwall"
	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/proxies/mcpwall"
	"github.com/crashwall/chaos/spec"
)

// ServeStdio serves the hub's tools over MCP on in/out until the client closes its end
// or ctx ends. Lines that are not JSON-RPC are answered with an error and recorded.
func ServeStdio(ctx context.Context, h *hub.Hub, in io.Reader, out io.Writer) error {
	t := &mcpwall.GuardedTransport{In: in, Out: out, OnReject: func(reason string) { h.RecordError("stdio", reason) }}
	return mcpwall.NewServer(h, "stdio").Run(ctx, t)
}

// Bridge serves, over MCP on in/out, the tools of the hub at hubURL, forwarding every
// call to it: the hub keeps the world, the fault and the record.
//
//	agent ──stdio──> Bridge ──streamable HTTP──> hub
func Bridge(ctx context.Context, hubURL string, in io.Reader, out io.Writer) error {
	client := mcp.NewClient(&mcp.Implementation{Name: "chaos-wall-bridge", Version: hub.Version}, nil)
	hc := &http.Client{Transport: headerTransport{httpwall.TransportHeader, "stdio"}}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hubURL + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		return fmt.Errorf("wall: cannot reach the hub at %s: %w", hubURL, err)
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		return fmt.Errorf("wall: list the hub's tools: %w", err)
	}
	forward := func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: req.Params.Name, Arguments: req.Params.Arguments})
		if err != nil {
			var we *jsonrpc.Error
			if errors.As(err, &we) {
				return nil, we
			}
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the hub did not answer: " + err.Error()}
		}
		return res, nil
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "chaos-wall", Version: hub.Version}, nil)
	known := map[string]bool{}
	for _, tool := range list.Tools {
		known[tool.Name] = true
		srv.AddTool(tool, forward)
	}
	// A call of a tool the hub does not serve goes to the hub too, which records it and
	// answers it; the SDK would otherwise answer it here, unrecorded.
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if call, ok := req.(*mcp.CallToolRequest); ok && method == "tools/call" && call.Params != nil && !known[call.Params.Name] {
				return forward(ctx, call)
			}
			return next(ctx, method, req)
		}
	})
	t := &mcpwall.GuardedTransport{In: in, Out: out}
	return mcpwall.Run(ctx, srv, t)
}

type headerTransport struct{ key, value string }

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(t.key, t.value)
	return http.DefaultTransport.RoundTrip(r)
}

// WallCommand is the {wall} token: a shell command line that serves the tools of the hub
// at hubURL over MCP stdio. bin, the chaos binary, is quoted (its path may hold spaces), so
// the line is run with sh -c.
func WallCommand(bin, hubURL string) string {
	return spec.ShellQuote(bin) + " wall --hub " + hubURL
}

// WallCodexConfig is the {codex_config} token: one `-c` override of Codex (`codex exec -c
// {codex_config}`) that gives it the wall as its MCP server "chaos", started over stdio,
// with its tools approved: `codex exec` runs with approval policy "never", under which
// an MCP tool call that needs an approval is refused ("MCP tool call requires approval,
// but approval policy is never"). It is required: Codex then waits for the server before
// its first model call (an optional server's tools are listed only once it is up, and a
// first request sent before that lacks them: the model's first call is then "unsupported"
// and never reaches the wall), and stops if the wall cannot start. Codex reads TOML, and
// the value of a `-c key=value` is a TOML value, here an inline table.
func WallCodexConfig(bin, hubURL string) string {
	return codexConfig(bin, []string{"wall", "--hub", hubURL})
}

// codexConfig is Codex's -c override that starts the stdio server command with args, its
// tools approved, the server required.
func codexConfig(command string, args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = tomlString(a)
	}
	return fmt.Sprintf(`mcp_servers.chaos={command = %s, args = [%s], default_tools_approval_mode = "approve", required = true}`,
		tomlString(command), strings.Join(quoted, ", "))
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// WallMCPConfig is the {mcp_config} token: the MCP client configuration that starts the wall
// over stdio, in the form Claude Code's --mcp-config and Cursor's mcp.json take. The
// command and its arguments stand apart, so nothing needs quoting.
func WallMCPConfig(bin, hubURL string) string {
	return mcpConfig(bin, []string{"wall", "--hub", hubURL})
}

// mcpConfig is an MCP client configuration that starts the stdio server command with args.
func mcpConfig(command string, args []string) string {
	type server struct {
		Type    string   `json:"type"`
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	cfg := map[string]map[string]server{
		"mcpServers": {"chaos": {Type: "stdio", Command: command, Args: args}},
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(cfg)
	return strings.TrimSpace(b.String())
}
