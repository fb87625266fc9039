package mcpwall

import (
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
)

// BenchmarkServerHandler is what the guard's hand-over costs a call (fastcall.go): the
// plain tools/call through the server's own method handler (the SDK's dispatch, callTool
// and every middleware) and encoded, against the baseline measured interleaved in the same
// run, Hub.Call and the result encoded directly (what the guard did before it handed
// calls over). It reports both (ns/call) and their ratio (x-direct).
func BenchmarkServerHandler(b *testing.B) {
	s, err := spec.Parse("bench.yaml", []byte(`name: bench
task: t
tools:
  - name: update_ticket
    effect: write
    key_field: field
    value_field: value
    reply: '{"status": "updated"}'
`))
	if err != nil {
		b.Fatal(err)
	}
	h, err := hub.NewHub(hub.Config{Spec: s, Condition: faults.Condition{ID: faults.CleanID}, Trial: "bench", Record: record.Discard()})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close("bench over")
	srv := NewServer(h, "stdio")
	c := &GuardedTransport{In: eternal{}, Out: io.Discard}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ss, err := srv.Connect(ctx, c, nil)
	if err != nil {
		b.Fatal(err)
	}
	handler := srv.methodHandler()
	args := json.RawMessage(`{"field":"priority","value":"urgent"}`)
	id, _ := jsonrpc.MakeID(int64(7))
	var viaHandler, direct time.Duration
	throughHandler := func() {
		start := time.Now()
		resp := answerCall(ctx, handler, id, &mcp.CallToolRequest{Session: ss, Params: &mcp.CallToolParamsRaw{Name: "update_ticket", Arguments: args}})
		jsonrpc.EncodeMessage(resp)
		viaHandler += time.Since(start)
	}
	throughHub := func() {
		start := time.Now()
		r := &jsonrpc.Response{ID: id}
		h.Contact("tools/call")
		reply, err := h.Call(ctx, "stdio", "update_ticket", args)
		if err != nil {
			b.Fatal(err)
		}
		r.Result, _ = json.Marshal(ToolResult(reply))
		jsonrpc.EncodeMessage(r)
		direct += time.Since(start)
	}
	i := 0
	for b.Loop() {
		// Each goes first every other time: neither gets the warmer cache for good.
		if i++; i%2 == 0 {
			throughHandler()
			throughHub()
		} else {
			throughHub()
			throughHandler()
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(viaHandler.Nanoseconds())/n, "handler-ns/call")
	b.ReportMetric(float64(direct.Nanoseconds())/n, "direct-ns/call")
	b.ReportMetric(float64(viaHandler)/float64(direct), "x-direct")
}

// eternal is a stream that never has a message: the session stays open while the
// benchmark calls its server's handler.
type eternal struct{}

func (eternal) Read(p []byte) (int, error) { select {} }
