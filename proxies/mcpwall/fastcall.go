package mcpwall

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	sjson "github.com/segmentio/encoding/json"
)

// The SDK's connection hands a tools/call to a goroutine of its dispatcher after decoding
// its params twice (once for its _meta, once for the call), each time making and zeroing
// a 32 KiB buffer: most of a stdio call's own time. The guard has decoded the message
// already, so for the plainest and commonest call it does what the SDK's connection does
// itself and hands the call straight to the server's own method handler (methodHandler: the
// SDK's dispatch under every middleware of the server, the wall's and the SDK's), which
// answers it as it answers any call:
//
//	line ──decode──> tools/call {name, arguments}, session initialized ──> server's handler ──> answer
//	                 anything else (initialize, lists, pings, _meta, odd params) ──> SDK's connection
//
// So there is one reader of the wire (the guard, the SDK's Connection) and one answerer
// (the server's handler); what the guard skips is the SDK connection's dispatch, not any
// of the server's logic. TestFastCallSameAnswers drives the same session both ways: the
// same bytes, the same record.
type fastCalls struct {
	call   mcp.MethodHandler
	sess   *mcp.ServerSession
	inline bool // run on the reading goroutine (the simulated world answers from memory)

	mu sync.Mutex
	// cancels ends a call running on its own goroutine, for notifications/cancelled.
	cancels map[jsonrpc.ID]context.CancelFunc
}

// fastAnswered counts the calls the guards (stdio and HTTP) have answered themselves.
var fastAnswered atomic.Int64

// FastAnswered is how many tool calls the guards of this process have handed straight to
// the server's handler so far: how the tests of every transport see the fast path taken.
func FastAnswered() int64 { return fastAnswered.Load() }

// methodHandler is the server's receiving method handler as it stands the first time it
// is asked for, with every middleware added so far, captured by a middleware that keeps
// its next. A wall server gets its middleware before it serves.
func (s *Server) methodHandler() mcp.MethodHandler {
	s.once.Do(func() {
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			s.handler = next
			return next
		})
	})
	return s.handler
}

// fastParams returns the tool's name and arguments of a tools/call whose params are an
// object with a string "name" and, optionally, "arguments", each once and written
// plainly, and nothing else (no _meta: progress tokens and the sessionless protocol stay
// with the SDK); ok false otherwise.
func fastParams(params json.RawMessage) (name string, args json.RawMessage, ok bool) {
	var rawName []byte
	whole := members(params, func(key []byte, start, end int) bool {
		switch {
		case string(key) == `"name"` && rawName == nil:
			rawName = params[start:end]
		case string(key) == `"arguments"` && args == nil:
			args = params[start:end]
		default:
			return false
		}
		return true
	})
	if !whole || len(rawName) == 0 || rawName[0] != '"' {
		return "", nil, false
	}
	if _, err := sjson.Parse(rawName, &name, sjson.DontMatchCaseInsensitiveStructFields); err != nil {
		return "", nil, false
	}
	return name, args, true
}

// plainCall returns the tools/call req as the SDK hands it to a server's handler, for a
// call the guards take: params of only a name and arguments (fastParams); nil otherwise.
func plainCall(ss *mcp.ServerSession, req *jsonrpc.Request) *mcp.CallToolRequest {
	if req.Method != "tools/call" || !req.IsCall() {
		return nil
	}
	name, args, ok := fastParams(req.Params)
	if !ok {
		return nil
	}
	return &mcp.CallToolRequest{Session: ss, Params: &mcp.CallToolParamsRaw{Name: name, Arguments: args}}
}

// answerCall runs call through handler and returns the answer to request id, as the SDK's
// connection writes it.
func answerCall(ctx context.Context, handler mcp.MethodHandler, id jsonrpc.ID, call *mcp.CallToolRequest) *jsonrpc.Response {
	resp := &jsonrpc.Response{ID: id}
	res, err := handler(ctx, "tools/call", call)
	if err != nil {
		resp.Error = err
	} else if resp.Result, err = json.Marshal(res); err != nil {
		resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	fastAnswered.Add(1)
	return resp
}

// take reports whether the guard takes msg past the SDK's connection (to the server's
// handler, writing the answer itself); when it does, it starts the call.
func (c *guardConn) take(msg jsonrpc.Message) bool {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return false
	}
	f := c.fast.Load()
	if !req.IsCall() {
		if f != nil && req.Method == "notifications/cancelled" {
			f.cancel(req.Params)
		}
		return false
	}
	if c.inFlight {
		// A client's id reused while its first request is unanswered: refused as the SDK
		// refuses it (nothing runs, nothing is answered), whichever path took the first.
		return true
	}
	// The SDK refuses a call before its session is initialized; such a call goes to it.
	if f == nil || f.sess.InitializeParams() == nil {
		return false
	}
	call := plainCall(f.sess, req)
	if call == nil {
		return false
	}
	if f.inline {
		// The simulated world answers from memory in microseconds: run here, on the
		// reading goroutine, and written without waiting (answerNow), a call costs no
		// goroutine and no wake-up of another thread.
		c.answerNow(answerCall(c.ctx, f.call, req.ID, call))
		return true
	}
	// Real servers may take their time: as the SDK's dispatcher does, such a call runs
	// beside the reading of the next messages, a cancellation among them.
	ctx, cancel := context.WithCancel(c.ctx)
	f.mu.Lock()
	f.cancels[req.ID] = cancel
	f.mu.Unlock()
	go func() {
		resp := answerCall(ctx, f.call, req.ID, call)
		f.mu.Lock()
		delete(f.cancels, req.ID)
		f.mu.Unlock()
		cancel()
		c.Write(c.ctx, resp)
	}()
	return true
}

// cancelledID is the id of the request a notifications/cancelled with params names.
func cancelledID(params json.RawMessage) (jsonrpc.ID, bool) {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	return id, err == nil
}

// cancel ends the context of the call a notifications/cancelled names, as the SDK ends
// its own (the call still answers).
func (f *fastCalls) cancel(params json.RawMessage) {
	id, ok := cancelledID(params)
	if !ok {
		return
	}
	f.mu.Lock()
	cancel := f.cancels[id]
	f.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}
