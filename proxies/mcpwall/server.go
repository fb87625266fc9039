// Package mcpwall is the wall's MCP server: the hub's tools served through the official
// MCP Go SDK, with the guard that answers a malformed message (on a stream or an HTTP POST)
// with a JSON-RPC error instead of ending the session. proxies/stdio and proxies/httpwall
// put it on their transports; proxies/upstream serves real servers' tools with its parts.
package mcpwall

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// Server is the wall's MCP server: the SDK's server of a hub's tools, which the guards
// hand its plain tool calls to directly (fastcall.go). Each holds its own hub: nothing
// outlives it.
type Server struct {
	*mcp.Server
	inMemory func() bool // its calls answer from memory (Hub.InMemory)

	once    sync.Once
	handler mcp.MethodHandler // methodHandler
}

// NewServer is an MCP server that serves the hub's tools. transport names the
// transport in the record ("stdio", "http").
func NewServer(h *hub.Hub, transport string) *Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "chaos-wall", Version: hub.Version}, nil)
	for _, t := range h.Tools() {
		s.AddTool(Tool(t),
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				reply, err := h.Call(ctx, transport, req.Params.Name, req.Params.Arguments)
				if err != nil {
					return nil, RPCError(err)
				}
				return ToolResult(reply), nil
			})
	}
	s.AddReceivingMiddleware(UnknownTools(func() *hub.Hub { return h }, transport), countContacts(h))
	return &Server{Server: s, inMemory: h.InMemory}
}

// countContacts counts every MCP message the wall receives (Hub.Contact), so that a
// trial without a tool call can tell an agent that never initialized from one that
// initialized and called nothing; and tells the HTTP guard that a session has handled
// a notification (noticed).
func countContacts(h *hub.Hub) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			h.Contact(method)
			if strings.HasPrefix(method, "notifications/") {
				noticed(req.GetSession())
			}
			return next(ctx, method, req)
		}
	}
}

// UnknownTools sends a tools/call for a tool the server does not serve to the hub, so that
// the call is recorded (a rejected row, as REST records its 404) and answered with the
// hub's message, which lists the tools there are. Without it the SDK answers such a call
// itself and the record never sees it. hubFor may return nil (no run open): the SDK's own
// answer stands.
func UnknownTools(hubFor func() *hub.Hub, transport string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			call, ok := req.(*mcp.CallToolRequest)
			if method != "tools/call" || !ok || call.Params == nil {
				return next(ctx, method, req)
			}
			h := hubFor()
			if h == nil || h.Knows(call.Params.Name) {
				return next(ctx, method, req)
			}
			if _, err := h.Call(ctx, transport, call.Params.Name, call.Params.Arguments); err != nil {
				return nil, RPCError(err)
			}
			return next(ctx, method, req)
		}
	}
}

// Tool is how the wall lists a tool: its name, description and input schema, and its
// annotations (world.Annotations: derived from a simulated tool's effect, a real server's
// own, the spec's over either; clients act on readOnlyHint and destructiveHint). A real
// tool's outputSchema is not passed on: a fault's damaged structured content would then
// fail the client's own validation instead of reaching the agent.
func Tool(t spec.Tool) *mcp.Tool {
	mt := &mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: hub.InputSchema(t)}
	var a mcp.ToolAnnotations
	if len(t.Annotations) > 0 {
		json.Unmarshal(t.Annotations, &a) // a real server's title and hints
	}
	h := world.Annotations(t)
	if h.ReadOnly != nil {
		a.ReadOnlyHint = *h.ReadOnly
	}
	if h.Idempotent != nil {
		a.IdempotentHint = *h.Idempotent
	}
	a.DestructiveHint, a.OpenWorldHint = h.Destructive, h.OpenWorld
	if a != (mcp.ToolAnnotations{}) {
		mt.Annotations = &a
	}
	return mt
}

// RPCError maps a hub error to a JSON-RPC error the client can read.
func RPCError(err error) error {
	var ce *hub.CallError
	if errors.As(err, &ce) {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: ce.Msg}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}

// ToolResult is a reply as an MCP tool result: its text, and its structured content
// where it has one.
func ToolResult(reply world.Reply) *mcp.CallToolResult {
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: reply.Text}}, IsError: reply.IsError}
	if reply.Structured != "" {
		res.StructuredContent = json.RawMessage(reply.Structured)
	}
	return res
}

// Run serves srv on t until the client closes its end or ctx ends; the end of the input
// or of ctx is no error. Every message goes to the SDK's connection: a wall server's Run
// lets a GuardedTransport take plain tool calls past it.
func Run(ctx context.Context, srv *mcp.Server, t mcp.Transport) error {
	return run(ctx, srv, t, nil)
}

// Run serves s on t as Run does; a GuardedTransport hands the plain tool calls it reads
// straight to s's method handler (fastcall.go), once it knows the session.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	g, _ := t.(*GuardedTransport)
	if g == nil {
		return run(ctx, s.Server, t, nil)
	}
	g.fast = true
	return run(ctx, s.Server, t, func(ss *mcp.ServerSession) { g.serve(s, ss) })
}

// run connects srv on t, tells connected the session (nil when none was made), and waits
// for the session's end or ctx's.
func run(ctx context.Context, srv *mcp.Server, t mcp.Transport, connected func(*mcp.ServerSession)) error {
	ss, err := srv.Connect(ctx, t, nil)
	if connected != nil {
		connected(ss)
	}
	if err != nil {
		return quiet(err)
	}
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case <-ctx.Done():
		ss.Close()
		<-ended
		return quiet(ctx.Err())
	case err := <-ended:
		return quiet(err)
	}
}

// quiet is err, but nil for the end of the input, of ctx or of the connection.
func quiet(err error) error {
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	return err
}
