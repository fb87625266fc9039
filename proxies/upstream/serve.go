package upstream

import (
	"context"
	"encoding/json"
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/proxies/mcpwall"
	"github.com/crashwall/chaos/world"
)

// ServeUpstream serves the upstream's tools over MCP on in/out (the stdio server a
// desktop agent starts, chaos proxy serve). Each call goes to the hub hubFor returns
// (a run is open: faulted and recorded there), or, when it returns nil, straight to the
// real server, recorded nowhere: the reply the agent gets is the server's, untouched.
//
//	agent ──stdio──> ServeUpstream ──run open──> Hub.Call ──> Upstream ──> server
//	                               └─no run───────────────────> Upstream.CallTool ──> server
func ServeUpstream(ctx context.Context, up *Upstream, hubFor func() *hub.Hub, in io.Reader, out io.Writer) error {
	srv := mcp.NewServer(&mcp.Implementation{Name: "chaos-proxy", Version: hub.Version}, nil)
	for _, t := range up.Tools() {
		srv.AddTool(mcpwall.Tool(t),
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if h := hubFor(); h != nil {
					reply, err := h.Call(ctx, "stdio", req.Params.Name, req.Params.Arguments)
					if err != nil {
						return nil, mcpwall.RPCError(err)
					}
					return mcpwall.ToolResult(reply), nil
				}
				t, _ := up.Tool(req.Params.Name)
				args := map[string]any{}
				if len(req.Params.Arguments) > 0 {
					if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
						return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "arguments must be a JSON object"}
					}
				}
				if t.Server == "" {
					return mcpwall.ToolResult(up.Call(ctx, t, args, world.Perform)), nil
				}
				res, err := up.CallTool(ctx, t.Server, t.Remote, args)
				if err != nil {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
				}
				// A real success seen here makes a later run's fabricated one look like it.
				up.note(t, args, replyOf(res))
				return res, nil
			})
	}
	srv.AddReceivingMiddleware(mcpwall.UnknownTools(hubFor, "stdio"))
	return mcpwall.Run(ctx, srv, &mcpwall.GuardedTransport{In: in, Out: out})
}
