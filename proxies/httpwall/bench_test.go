package proxies

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/record"
)

// BenchmarkToolCall is what the wall costs an agent per tool call: one update_ticket
// on a clean hub whose record keeps nothing (record.Discard, so the disk is not
// measured), made
//
//	hub   in-process through Hub.Call: the baseline, the hub's own work
//	rest  POST /tools/update_ticket over loopback HTTP (keep-alive)
//	mcp   tools/call with the SDK's client over streamable HTTP on loopback
//
// rest and mcp also report, against a baseline measured in the same sub-benchmark
// right after their own loop (the same number of Hub.Call calls on a fresh hub):
//
//	added-µs/call  (transport ns/op - baseline ns/op) / 1000
//	x-baseline     transport ns/op / baseline ns/op
//	added-p50-µs   the transport's median call less the baseline's median call
func BenchmarkToolCall(b *testing.B) {
	args := map[string]any{"field": "priority", "value": "urgent"}
	rawArgs, _ := json.Marshal(args)
	ctx := context.Background()

	b.Run("hub", func(b *testing.B) {
		h := newHub(b, faults.CleanID, record.Discard())
		for b.Loop() {
			if _, err := h.Call(ctx, "bench", "update_ticket", rawArgs); err != nil {
				b.Fatal(err)
			}
		}
	})

	b.Run("rest", func(b *testing.B) {
		srv := serveHTTP(b, newHub(b, faults.CleanID, record.Discard()))
		url := srv.URL + "/tools/update_ticket"
		body := string(rawArgs)
		var times []time.Duration
		for b.Loop() {
			t0 := time.Now()
			resp, err := http.Post(url, "application/json", strings.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body) // read to the end so the connection is reused
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Fatalf("status %d", resp.StatusCode)
			}
			times = append(times, time.Since(t0))
		}
		reportOverhead(b, rawArgs, times)
	})

	b.Run("mcp", func(b *testing.B) {
		srv := serveHTTP(b, newHub(b, faults.CleanID, record.Discard()))
		cs := connect(b, &mcp.StreamableClientTransport{Endpoint: srv.MCPURL()})
		params := &mcp.CallToolParams{Name: "update_ticket", Arguments: args}
		var times []time.Duration
		for b.Loop() {
			t0 := time.Now()
			res, err := cs.CallTool(ctx, params)
			if err != nil || res.IsError {
				b.Fatalf("call: %v %v", err, res)
			}
			times = append(times, time.Since(t0))
		}
		reportOverhead(b, rawArgs, times)
	})
}

// reportOverhead measures the baseline (b.N calls of Hub.Call on a fresh hub) after
// the sub-benchmark's loop and reports the transport's cost over it; times are the
// transport's calls, one by one.
func reportOverhead(b *testing.B, rawArgs json.RawMessage, times []time.Duration) {
	b.Helper()
	perCall := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	h := newHub(b, faults.CleanID, record.Discard())
	base := make([]time.Duration, 0, b.N)
	start := time.Now()
	for range b.N {
		t0 := time.Now()
		if _, err := h.Call(context.Background(), "bench", "update_ticket", rawArgs); err != nil {
			b.Fatal(err)
		}
		base = append(base, time.Since(t0))
	}
	mean := float64(time.Since(start).Nanoseconds()) / float64(b.N)
	b.ReportMetric((perCall-mean)/1e3, "added-µs/call")
	b.ReportMetric(perCall/mean, "x-baseline")
	b.ReportMetric(float64(median(times)-median(base))/1e3, "added-p50-µs")
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
