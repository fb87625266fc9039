// Package walltest is what the tests of the wall's transports share: a hub on the example
// spec, the wall served over HTTP, stdio pipes and the relay's stream, and the MCP SDK's
// client on each. Only tests import it.
package walltest

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/proxies/httpwall"
	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/proxies/stdio"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
)

// The transport tests drive the hub with real clients (the MCP Go SDK's client over
// stdio pipes and streamable HTTP, net/http for REST) and check what the agent receives
// against what the record says happened.

// ExampleSpec is the example spec the transport tests serve (examples/support-ticket.yaml).
var ExampleSpec = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "examples", "support-ticket.yaml")
}()

// The example's fixed texts, as the spec writes them.
const (
	EmailReply  = `{"ticket": "T-4821", "from": "dana@example.com", "date": "2026-11-02", "subject": "Checkout broken for all EU customers", "body": "Since this morning no customer in the EU can pay. This is urgent, please route to the payments team."}`
	UpdateReply = `{"status": "updated"}`
)

// NewTrial is a hub for one condition of the example spec, recording to a file that
// the test reads back. The hub is closed at cleanup.
func NewTrial(tb testing.TB, condID string) (*hub.Hub, string) {
	tb.Helper()
	path := tb.TempDir() + "/record.jsonl"
	rec, err := record.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	return NewHub(tb, condID, rec), path
}

// NewHub is a hub for one condition of the example spec recording to rec, closed at cleanup.
func NewHub(tb testing.TB, condID string, rec *record.Writer) *hub.Hub {
	tb.Helper()
	return NewHubOn(tb, condID, rec, nil)
}

// NewHubOn is NewHub with source(spec) behind the wall (nil: the simulated world).
func NewHubOn(tb testing.TB, condID string, rec *record.Writer, source func(*spec.Spec) hub.ToolSource) *hub.Hub {
	tb.Helper()
	s, conds := example(tb)
	cond, ok := faults.Find(conds, condID)
	if !ok {
		tb.Fatalf("the example has no condition %q", condID)
	}
	var src hub.ToolSource
	if source != nil {
		src = source(s)
	}
	h, err := hub.NewHub(hub.Config{Spec: s, Condition: cond, Seed: s.Seed, Trial: tb.Name(), Record: rec, Source: src})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { h.Close("test over") })
	return h
}

// ServeHTTP serves the hub on a loopback port until the test ends.
func ServeHTTP(tb testing.TB, h *hub.Hub) *httpwall.Server {
	tb.Helper()
	srv, err := httpwall.Serve(h, "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { srv.Close() })
	return srv
}

// Pipes are the two ends of a stdio connection made of io.Pipes.
type Pipes struct {
	ServerIn  *io.PipeReader // what the wall reads (its stdin)
	ClientOut *io.PipeWriter // what the client writes
	ClientIn  *io.PipeReader // what the client reads
	ServerOut *io.PipeWriter // what the wall writes (its stdout)
}

// NewPipes is a stdio connection made of two io.Pipes.
func NewPipes() Pipes {
	var p Pipes
	p.ServerIn, p.ClientOut = io.Pipe()
	p.ClientIn, p.ServerOut = io.Pipe()
	return p
}

// Served is a wall running over pipes: Done is closed when it returns Err.
type Served struct {
	Done chan struct{}
	Err  error
}

// RunWall runs serve (ServeStdio or Bridge) over pipes. At cleanup the client's end is
// closed and the test waits for the wall to stop.
func RunWall(tb testing.TB, serve func(ctx context.Context, in io.Reader, out io.Writer) error) (Pipes, *Served) {
	tb.Helper()
	p := NewPipes()
	w := &Served{Done: make(chan struct{})}
	go func() {
		w.Err = serve(context.Background(), p.ServerIn, p.ServerOut)
		p.ServerOut.Close()
		close(w.Done)
	}()
	tb.Cleanup(func() {
		p.ClientOut.Close()
		p.ClientIn.Close()
		select {
		case <-w.Done:
		case <-time.After(10 * time.Second):
			tb.Error("the wall did not stop after its stdin was closed")
		}
	})
	return p, w
}

// Connect connects the SDK's client over t, closing the session at cleanup.
func Connect(tb testing.TB, t mcp.Transport) *mcp.ClientSession {
	tb.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "transport-test", Version: "0"}, nil)
	cs, err := c.Connect(context.Background(), t, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close() })
	return cs
}

// ConnectStdio is the SDK's client on the hub served over stdio pipes (stdio.ServeStdio).
func ConnectStdio(tb testing.TB, h *hub.Hub) *mcp.ClientSession {
	p, _ := RunWall(tb, func(ctx context.Context, in io.Reader, out io.Writer) error { return stdio.ServeStdio(ctx, h, in, out) })
	return Connect(tb, &mcp.IOTransport{Reader: p.ClientIn, Writer: p.ClientOut})
}

// ConnectHTTP is the SDK's client on the hub's streamable HTTP endpoint.
func ConnectHTTP(tb testing.TB, h *hub.Hub) *mcp.ClientSession {
	srv := ServeHTTP(tb, h)
	return Connect(tb, &mcp.StreamableClientTransport{Endpoint: srv.MCPURL()})
}

// ConnectBridge is the SDK's client over stdio on the bridge (stdio.Bridge) to the hub's
// HTTP server.
func ConnectBridge(tb testing.TB, h *hub.Hub) *mcp.ClientSession {
	srv := ServeHTTP(tb, h)
	p, _ := RunWall(tb, func(ctx context.Context, in io.Reader, out io.Writer) error {
		return stdio.Bridge(ctx, srv.URL, in, out)
	})
	return Connect(tb, &mcp.IOTransport{Reader: p.ClientIn, Writer: p.ClientOut})
}

// ServeStream serves h's MCP stream in a private folder under the system's temporary
// folder (a test's own folder can be too deep for a socket path), closed at cleanup.
func ServeStream(tb testing.TB, h *hub.Hub) *stdio.StreamServer {
	tb.Helper()
	st, err := stdio.ServeStream(h, os.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

// DialStream connects to the stream's socket, as the relay does; closed at cleanup.
func DialStream(tb testing.TB, st *stdio.StreamServer) *net.UnixConn {
	tb.Helper()
	conn, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: st.Path, Net: "unix"})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	return conn
}

// ConnectStream is the MCP SDK's client on the hub's stream, as the relay connects an
// agent's stdio to it.
func ConnectStream(tb testing.TB, h *hub.Hub) *mcp.ClientSession {
	conn := DialStream(tb, ServeStream(tb, h))
	return Connect(tb, &mcp.IOTransport{Reader: conn, Writer: conn})
}

// CallText calls a tool and returns its text and error flag; a JSON-RPC error fails the test.
func CallText(tb testing.TB, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	tb.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		tb.Fatalf("%s(%v): %v", tool, args, err)
	}
	return ResultText(res), res.IsError
}

// ResultText is the text of a tool result's text contents.
func ResultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// ReadRecord reads the record as it stands (the writer writes a row per call, so
// it can be read mid-trial).
func ReadRecord(tb testing.TB, path string) *record.Log {
	tb.Helper()
	l, err := record.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

// RecordRows is the record's rows as JSON, without their times: what two sessions that
// made the same calls leave alike.
func RecordRows(tb testing.TB, path string) []string {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r record.Row
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			tb.Fatalf("record line %q: %v", line, err)
		}
		r.Time = time.Time{}
		j, _ := json.Marshal(r)
		out = append(out, string(j))
	}
	return out
}

// JSONEqual says whether a and b are the same JSON value (json.RawMessage or anything
// that marshals).
func JSONEqual(tb testing.TB, a, b any) bool {
	tb.Helper()
	norm := func(v any) any {
		raw, ok := v.(json.RawMessage)
		if !ok {
			var err error
			if raw, err = json.Marshal(v); err != nil {
				tb.Fatal(err)
			}
		}
		var out any
		if err := json.Unmarshal(raw, &out); err != nil {
			tb.Fatal(err)
		}
		return out
	}
	return reflect.DeepEqual(norm(a), norm(b))
}

// RestCall sends a JSON body to url and returns the status and body; a reply that is not
// sent as JSON is an error of the test.
func RestCall(tb testing.TB, method, url, body string) (int, []byte) {
	tb.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		tb.Errorf("%s %s: Content-Type %q, want application/json", method, url, ct)
	}
	return resp.StatusCode, b
}

// ReportOverhead measures the baseline (b.N calls of Hub.Call on a fresh hub) after
// the sub-benchmark's loop and reports the transport's cost over it; times are the
// transport's calls, one by one.
func ReportOverhead(b *testing.B, rawArgs json.RawMessage, times []time.Duration) {
	b.Helper()
	perCall := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	h := NewHub(b, faults.CleanID, record.Discard())
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

// ExampleConditions is every condition of the example spec (ExampleSpec): the
// fault families on every tool they apply to, for tests that try them all.
func ExampleConditions(tb testing.TB) []faults.Condition {
	tb.Helper()
	_, conds := example(tb)
	return conds
}

// example is the example spec and its conditions.
func example(tb testing.TB) (*spec.Spec, []faults.Condition) {
	tb.Helper()
	s, err := spec.Load(ExampleSpec)
	if err != nil {
		tb.Fatal(err)
	}
	conds, err := faults.Generate(s)
	if err != nil {
		tb.Fatal(err)
	}
	return s, conds
}

// SameEnding checks that two hubs that served the same script, one through the SDK
// alone and one through the guard's fast path, end the same: the same counts of calls,
// faults and contacts, and (once both are closed) the same record rows but for their
// times.
func SameEnding(tb testing.TB, sdkHub *hub.Hub, sdkRecord string, fastHub *hub.Hub, fastRecord string) {
	tb.Helper()
	if a, b := sdkHub.Stats(), fastHub.Stats(); a != b {
		tb.Errorf("the SDK alone leaves the hub's counts %+v, the guard's %+v", a, b)
	}
	sdkHub.Close("test over")
	fastHub.Close("test over")
	a, b := RecordRows(tb, sdkRecord), RecordRows(tb, fastRecord)
	if len(a) != len(b) {
		tb.Fatalf("the SDK alone recorded %d rows, the guard %d", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			tb.Errorf("record row %d:\n the SDK alone %s\n the guard's   %s", i, a[i], b[i])
		}
	}
}
