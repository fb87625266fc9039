package mcpwall

import (
	"encoding/json"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sjson "github.com/segmentio/encoding/json"

	"github.com/crashwall/chaos/proxies/hub"
)

// The SDK answers a tools/call after decoding its params twice (once for its _meta,
// once for the call), each time making and zeroing a 32 KiB buffer, and hands it to a
// goroutine of its dispatcher: most of a stdio call's own time. On a stream the guard
// has already decoded the message once, so it answers the plainest and commonest call
// itself, exactly as the SDK would (the same bytes; TestFastCallSameAnswers):
//
//	line ──decode──> tools/call {name, arguments} of a hub tool, after initialize ──> Hub.Call ──> answer
//	                 anything else (initialize, lists, pings, _meta, unknown tools) ──> SDK
//
// Every call still goes through Hub.Call (validated, faulted, recorded with the state
// after it); the id is aliased and restored, and the end of input waits for the answer,
// as for a call the SDK answers.
type fastCalls struct {
	hub       *hub.Hub
	transport string
	// initID is the id of the initialize request the SDK is answering; ready is set once
	// it has answered it without an error (the SDK refuses calls before then).
	initID jsonrpc.ID
	ready  bool
}

// fastAnswered counts the calls the guards (stdio and HTTP) have answered themselves.
var fastAnswered atomic.Int64

// FastAnswered is how many tool calls the guards of this process have answered without
// the SDK so far: how the tests of every transport see the fast path taken.
func FastAnswered() int64 { return fastAnswered.Load() }

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

// take reports whether the guard answers msg itself; when it does, it starts the call.
func (c *guardConn) take(msg jsonrpc.Message) bool {
	f := c.fast
	if f == nil {
		return false
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() {
		return false
	}
	if c.inFlight {
		// A client's id reused while its first request is unanswered: refused as the SDK
		// refuses it (nothing runs, nothing is answered), whichever path took the first.
		return true
	}
	if req.Method == "initialize" {
		c.fmu.Lock()
		f.initID, f.ready = req.ID, false
		c.fmu.Unlock()
		return false
	}
	c.fmu.Lock()
	ready := f.ready
	c.fmu.Unlock()
	if !ready || req.Method != "tools/call" {
		return false
	}
	name, args, ok := fastParams(req.Params)
	if !ok || !f.hub.Knows(name) {
		return false
	}
	respond := func() *jsonrpc.Response {
		f.hub.Contact(req.Method)
		resp := &jsonrpc.Response{ID: req.ID}
		reply, err := f.hub.Call(c.ctx, f.transport, name, args)
		if err != nil {
			resp.Error = RPCError(err)
		} else if resp.Result, err = json.Marshal(ToolResult(reply)); err != nil {
			resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		}
		fastAnswered.Add(1)
		return resp
	}
	if f.hub.InMemory() {
		// The simulated world answers from memory in microseconds: run here, on the
		// reading goroutine, and written without waiting (answerNow), a call costs no
		// goroutine and no wake-up of another thread (BenchmarkWallCall measures it;
		// docs/ARCHITECTURE.md has the figures).
		c.answerNow(respond())
		return true
	}
	// Real servers may take their time: as the SDK's dispatcher does, such a call runs
	// beside the reading of the next messages (a cancellation among them).
	go func() { c.Write(c.ctx, respond()) }()
	return true
}

// answering notes an answer the SDK writes: the one to initialize opens the fast path.
func (c *guardConn) answering(resp *jsonrpc.Response) {
	if c.fast == nil {
		return
	}
	c.fmu.Lock()
	defer c.fmu.Unlock()
	if c.fast.initID.IsValid() && resp.ID == c.fast.initID && resp.Error == nil {
		c.fast.ready = true
	}
}
