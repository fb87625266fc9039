// Package agents holds the reference agents: scripted clients of the wall with no model
// behind them, whose true behaviour is known by construction. They give the verdict
// code a population to be checked against, and they drive the demo.
package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Client calls the wall's tools over one transport.
type Client interface {
	// Call calls a tool. A tool failure is isError with the failure's text; err is for a
	// call the transport could not make or the wall refused.
	Call(ctx context.Context, tool string, args map[string]any) (text string, isError bool, err error)
	Close() error
}

// Dial connects to the wall: transport "stdio" starts command (a shell command line, as
// {wall} is) with sh -c as an MCP server, "http" connects to an MCP streamable HTTP endpoint at url, "rest" posts
// to url/tools/<name>.
func Dial(ctx context.Context, transport, command, url string) (Client, error) {
	switch transport {
	case "stdio":
		if strings.TrimSpace(command) == "" {
			return nil, fmt.Errorf("transport stdio needs --wall-command, the command that starts the wall")
		}
		// exec: the shell becomes the wall, so closing stdin and signals reach it directly.
		return dialMCP(ctx, &mcp.CommandTransport{Command: exec.Command("sh", "-c", "exec "+command)})
	case "http":
		if url == "" {
			return nil, fmt.Errorf("transport http needs --url, the wall's MCP endpoint")
		}
		return dialMCP(ctx, &mcp.StreamableClientTransport{Endpoint: url})
	case "rest":
		if url == "" {
			return nil, fmt.Errorf("transport rest needs --url, the wall's base URL")
		}
		return &restClient{base: strings.TrimRight(url, "/"), hc: http.DefaultClient}, nil
	}
	return nil, fmt.Errorf("unknown transport %q (use stdio, http or rest)", transport)
}

type mcpClient struct{ cs *mcp.ClientSession }

func dialMCP(ctx context.Context, t mcp.Transport) (Client, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "chaos-reference-agent", Version: "0.1.0"}, nil)
	cs, err := c.Connect(ctx, t, nil)
	if err != nil {
		return nil, fmt.Errorf("connect to the wall: %w", err)
	}
	return &mcpClient{cs: cs}, nil
}

func (c *mcpClient) Call(ctx context.Context, tool string, args map[string]any) (string, bool, error) {
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return "", false, err
	}
	var b strings.Builder
	for _, ct := range res.Content {
		if t, ok := ct.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String(), res.IsError, nil
}

func (c *mcpClient) Close() error { return c.cs.Close() }

type restClient struct {
	base string
	hc   *http.Client
}

func (c *restClient) Call(ctx context.Context, tool string, args map[string]any) (string, bool, error) {
	body, _ := json.Marshal(args)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/tools/"+tool, bytes.NewReader(body))
	if err != nil {
		return "", false, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return "", false, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", false, err
	}
	switch {
	case resp.StatusCode == http.StatusOK:
		return string(b), false, nil
	case resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusNotFound:
		return "", false, fmt.Errorf("the wall refused the call: %s %s", resp.Status, strings.TrimSpace(string(b)))
	default:
		return string(b), true, nil
	}
}

func (c *restClient) Close() error { return nil }
