package proxies

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// Version is the wall's version as MCP clients see it.
var Version = "0.1.0"

// NewMCPServer is an MCP server that serves the hub's tools. transport names the
// transport in the record ("stdio", "http").
func NewMCPServer(h *Hub, transport string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "chaos-wall", Version: Version}, nil)
	for _, t := range h.Tools() {
		s.AddTool(mcpTool(t),
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				reply, err := h.Call(ctx, transport, req.Params.Name, req.Params.Arguments)
				if err != nil {
					return nil, rpcError(err)
				}
				return toolResult(reply), nil
			})
	}
	s.AddReceivingMiddleware(unknownTools(func() *Hub { return h }, transport), countContacts(h))
	return s
}

// countContacts counts every MCP message the wall receives (Hub.contact), so that a
// trial without a tool call can tell an agent that never initialized from one that
// initialized and called nothing.
func countContacts(h *Hub) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			h.contact(method)
			return next(ctx, method, req)
		}
	}
}

// unknownTools sends a tools/call for a tool the server does not serve to the hub, so that
// the call is recorded (a rejected row, as REST records its 404) and answered with the
// hub's message, which lists the tools there are. Without it the SDK answers such a call
// itself and the record never sees it. hubFor may return nil (no run open): the SDK's own
// answer stands.
func unknownTools(hubFor func() *Hub, transport string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			call, ok := req.(*mcp.CallToolRequest)
			if method != "tools/call" || !ok || call.Params == nil {
				return next(ctx, method, req)
			}
			h := hubFor()
			if h == nil || h.knows(call.Params.Name) {
				return next(ctx, method, req)
			}
			if _, err := h.Call(ctx, transport, call.Params.Name, call.Params.Arguments); err != nil {
				return nil, rpcError(err)
			}
			return next(ctx, method, req)
		}
	}
}

// mcpTool is how the wall lists a tool: its name, description and input schema, and its
// annotations (world.Annotations: derived from a simulated tool's effect, a real server's
// own, the spec's over either; clients act on readOnlyHint and destructiveHint). A real
// tool's outputSchema is not passed on: a fault's damaged structured content would then
// fail the client's own validation instead of reaching the agent.
func mcpTool(t spec.Tool) *mcp.Tool {
	mt := &mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: InputSchema(t)}
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

// rpcError maps a hub error to a JSON-RPC error the client can read.
func rpcError(err error) error {
	var ce *CallError
	if errors.As(err, &ce) {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: ce.Msg}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}
