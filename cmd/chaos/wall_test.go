package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/proxies/httpwall"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/tests/testkit"
)

// wallProcess is wallRun in-process with its stdin, stdout and stderr as pipes: what
// an agent sees when it starts `chaos wall` as its MCP server.
type wallProcess struct {
	stdin  *io.PipeWriter
	stdout *io.PipeReader
	stderr *bufio.Reader
	done   chan error
}

func startWall(t *testing.T, ctx context.Context, opts *WallOptions) *wallProcess {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	opts.IO = &IOStreams{In: inR, Out: outW, ErrOut: errW}
	w := &wallProcess{stdin: inW, stdout: outR, stderr: bufio.NewReader(errR), done: make(chan error, 1)}
	go func() {
		err := wallRun(ctx, opts)
		outW.Close()
		errW.Close()
		w.done <- err
	}()
	t.Cleanup(func() {
		inW.Close()
		outR.Close()
		errR.Close()
	})
	return w
}

// connect is the agent's MCP client over the wall's stdio.
func (w *wallProcess) connect(t *testing.T) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "wall-test", Version: "0"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: w.stdout, Writer: w.stdin}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func (w *wallProcess) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-w.done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("chaos wall did not return in 10s")
	}
	return nil
}

func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// lastRow reads the record and returns its last row, which must be the session end.
func lastRow(t *testing.T, path string) (*record.Log, record.Row) {
	t.Helper()
	l, err := record.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	last := l.Rows[len(l.Rows)-1]
	if last.Type != record.TypeSessionEnd || l.End == nil {
		t.Fatalf("the record's last row is %+v, want the session end", last)
	}
	return l, last
}

// TestWallStandalone: the agent plays the task through `chaos wall --spec`, under a
// phantom success, and ends the session by closing stdin (or the wall is stopped).
// Either way the record ends with the final state, the dropped write showing.
func TestWallStandalone(t *testing.T) {
	for _, ending := range []string{"stdin closed", "context cancelled"} {
		t.Run(ending, func(t *testing.T) {
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			path := t.TempDir() + "/record.jsonl"
			w := startWall(t, ctx, &WallOptions{Spec: exampleSpec, Condition: "phantom_success@update_ticket", Record: path})
			cs := w.connect(t)
			call(t, cs, "read_email", nil)
			if got := call(t, cs, "update_ticket", map[string]any{"field": "priority", "value": "urgent"}); got != `{"status": "updated"}` {
				t.Errorf("faulted write answered %q", got)
			}
			call(t, cs, "update_ticket", map[string]any{"field": "team", "value": "payments"})

			wantReason := "client closed stdin"
			if ending == "stdin closed" {
				cs.Close()
			} else {
				cancel(errors.New("the trial timed out"))
				wantReason = "stopped: the trial timed out"
			}
			if err := w.wait(t); err != nil {
				t.Errorf("wallRun = %v, want nil", err)
			}
			l, end := lastRow(t, path)
			if end.Reason != wantReason {
				t.Errorf("session end reason %q, want %q", end.Reason, wantReason)
			}
			if end.FinalState["priority"] != "normal" || end.FinalState["team"] != "payments" || end.Calls != 3 || end.Fired != 1 {
				t.Errorf("session end %+v, want priority normal (dropped), team payments, 3 calls, 1 fired", end)
			}
			if l.Start == nil || l.Start.Condition != "phantom_success@update_ticket" || l.Start.Trial != "standalone" {
				t.Errorf("session start %+v", l.Start)
			}
		})
	}
}

var listenLine = regexp.MustCompile(`^chaos wall: MCP at (http://127\.0\.0\.1:\d+)/mcp, REST at (http://127\.0\.0\.1:\d+)/tools\n$`)

// TestWallListen: with --listen the same hub is also served over HTTP; its URL is the
// first line on stderr, and calls on both transports land in the one record. A closed
// stdin (the wall started in the background) does not stop the HTTP server: only being
// stopped does.
func TestWallListen(t *testing.T) {
	path := t.TempDir() + "/record.jsonl"
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	w := startWall(t, ctx, &WallOptions{Spec: exampleSpec, Condition: faults.CleanID, Record: path, Listen: "127.0.0.1:0"})
	line, err := w.stderr.ReadString('\n')
	if err != nil {
		t.Fatalf("stderr: %q, %v", line, err)
	}
	m := listenLine.FindStringSubmatch(line)
	if m == nil || m[1] != m[2] {
		t.Fatalf("stderr line %q, want the MCP and REST URLs", line)
	}
	resp, err := http.Post(m[2]+"/tools/update_ticket", "application/json", strings.NewReader(`{"field":"team","value":"payments"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("REST call: %s", resp.Status)
	}
	cs := w.connect(t)
	if got := call(t, cs, "get_ticket_field", map[string]any{"field": "team"}); got != `{"field":"team","value":"payments"}` {
		t.Errorf("stdio read after the REST write: %q", got)
	}
	cs.Close() // closes the wall's stdin
	if line, err := w.stderr.ReadString('\n'); err != nil || !strings.Contains(line, "stdin closed; still serving HTTP") {
		t.Fatalf("after stdin closed, stderr %q (%v), want the wall to say it still serves HTTP", line, err)
	}
	resp, err = http.Post(m[2]+"/tools/update_ticket", "application/json", strings.NewReader(`{"field":"priority","value":"urgent"}`))
	if err != nil {
		t.Fatalf("REST call after stdin closed: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("REST call after stdin closed: %s", resp.Status)
	}
	stop()
	if err := w.wait(t); err != nil {
		t.Fatal(err)
	}
	l, end := lastRow(t, path)
	calls := l.Calls()
	if len(calls) != 3 || calls[0].Transport != "rest" || calls[1].Transport != "stdio" || calls[2].Transport != "rest" || end.FinalState["team"] != "payments" || end.FinalState["priority"] != "urgent" {
		t.Errorf("calls %+v, end %+v", calls, end)
	}
	if _, err := http.Get(m[2] + "/healthz"); err == nil {
		t.Error("the HTTP server still answers after the wall returned")
	}
}

// TestWallBridge: `chaos wall --hub URL` serves the hub's tools on stdio; the hub
// keeps the record, and names the transport the agent spoke.
func TestWallBridge(t *testing.T) {
	hub, path := testkit.ExampleHub(t, "bridge")
	srv, err := httpwall.Serve(hub, "")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	w := startWall(t, context.Background(), &WallOptions{Hub: srv.URL})
	cs := w.connect(t)
	call(t, cs, "update_ticket", map[string]any{"field": "priority", "value": "urgent"})
	cs.Close()
	if err := w.wait(t); err != nil {
		t.Fatal(err)
	}
	if err := hub.Close("agent exited"); err != nil {
		t.Fatal(err)
	}
	l, end := lastRow(t, path)
	if calls := l.Calls(); len(calls) != 1 || calls[0].Transport != "stdio" || end.FinalState["priority"] != "urgent" {
		t.Errorf("calls %+v end %+v", calls, end)
	}
}
