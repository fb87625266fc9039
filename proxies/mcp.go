package proxies

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Version is the wall's version as MCP clients see it.
var Version = "0.1.0"

// NewMCPServer is an MCP server that serves the hub's tools. transport names the
// transport in the record ("stdio", "http").
func NewMCPServer(h *Hub, transport string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "chaos-wall", Version: Version}, nil)
	for _, t := range h.Tools() {
		s.AddTool(&mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: InputSchema(t)},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				reply, err := h.Call(ctx, transport, req.Params.Name, req.Params.Arguments)
				if err != nil {
					return nil, rpcError(err)
				}
				return toolResult(reply), nil
			})
	}
	return s
}

// rpcError maps a hub error to a JSON-RPC error the client can read.
func rpcError(err error) error {
	var ce *CallError
	if errors.As(err, &ce) {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: ce.Msg}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}
