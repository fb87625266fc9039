package mcpwall_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"weak"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/proxies/internal/walltest"
	"github.com/crashwall/chaos/proxies/mcpwall"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/tests/fixture"
	"github.com/crashwall/chaos/world"
)

// fastScript is a session whose calls the guard takes past the SDK's dispatch where it can, and leaves
// to the SDK where it must: every line is a message, each answered in turn.
var fastScript = []string{
	callMsg(1, "update_ticket", `{"field":"priority","value":"urgent"}`), // before initialize: the SDK refuses it
	initializeMsg(2),
	initializedMsg,
	`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
	callMsg(4, "read_email", `{}`),
	callMsg(5, "update_ticket", `{"field":"priority","value":"urgent"}`),
	callMsg(6, "update_ticket", `{"field":"priority","value":"urgent"}`),
	callMsg(7, "update_ticket", `{"field":"assignee","value":"payments"}`),
	callMsg(8, "read_email", `{"name":"x"}`),
	callMsg(9, "update_ticket", `{"field":"priority"}`),                      // bad arguments
	callMsg(10, "update_ticket", `{"field":"priority","value":7,"extra":1}`), // bad arguments
	callMsg(11, "no_such_tool", `{}`),                                        // the SDK's, through UnknownTools
	`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"read_email"}}`,
	`{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"read_email","arguments":null}}`,
	`{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"arguments":{},"name":"read_email"}}`,
	`{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"read_email","arguments":{},"_meta":{"progressToken":"p"}}}`,
	`{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"read_email","name":"update_ticket","arguments":{}}}`,
	`{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"upd\u0061te_ticket","arguments":{"field":"priority","value":"low"}}}`,
	`{"jsonrpc":"2.0","id":1.50,"method":"tools/call","params":{"name":"read_email","arguments":{}}}`,
	`{"jsonrpc":"2.0","id":"s\u0041","method":"tools/call","params":{"name":"read_email","arguments":{}}}`,
	`{"jsonrpc":"2.0","id":18,"method":"tools/call","params":{"name":5}}`,
	`{"jsonrpc":"2.0","id":19,"method":"tools/call","params":[]}`,
	`{"jsonrpc":"2.0","id":20,"method":"ping"}`,
}

// TestFastCallSameAnswers: for every condition of the example spec, a session whose
// plain tool calls the guard hands to the server's handler itself (Server.Run)
// gets the same answers, byte for byte, and leaves the same record (but for the times)
// and the same counts of calls, faults and contacts (what tells no_tool_call from
// wall_not_reached) as the same session answered by the SDK alone; and the guard did take
// calls past the SDK.
func TestFastCallSameAnswers(t *testing.T) {
	conds := walltest.ExampleConditions(t)
	for _, c := range conds {
		t.Run(c.ID, func(t *testing.T) {
			sdkHub, sdkRecord := walltest.NewTrial(t, c.ID)
			fastHub, fastRecord := walltest.NewTrial(t, c.ID)
			before := mcpwall.FastAnswered()
			sdk := runScript(t, sdkHub, false)
			if n := mcpwall.FastAnswered() - before; n != 0 {
				t.Fatalf("served by mcpwall.Run the guard took %d calls past the SDK", n)
			}
			fast := runScript(t, fastHub, true)
			if n := mcpwall.FastAnswered() - before; n < 8 {
				t.Errorf("the guard took %d calls past the SDK, want at least 8: the fast path was not taken", n)
			}
			for i := range fastScript {
				if sdk[i] != fast[i] {
					t.Errorf("%s\n the SDK answers %s\n the guard answers %s", fastScript[i], sdk[i], fast[i])
				}
			}
			walltest.SameEnding(t, sdkHub, sdkRecord, fastHub, fastRecord)
			// Over OS pipes, as a process's stdio, the guard writes its answers itself on
			// the reading goroutine (answerNow): the same bytes again.
			osHub, osRecord := walltest.NewTrial(t, c.ID)
			overOS := runScriptOver(t, osHub, true, osPipes(t))
			for i := range fastScript {
				if sdk[i] != overOS[i] {
					t.Errorf("over OS pipes: %s\n the SDK answers %s\n the guard answers %s", fastScript[i], sdk[i], overOS[i])
				}
			}
			walltest.SameEnding(t, sdkHub, sdkRecord, osHub, osRecord)
		})
	}
}

// runScript sends fastScript to the hub's stdio wall a line at a time, each answered
// before the next (the notification is not answered), and returns the answers.
func runScript(t *testing.T, h *hub.Hub, fast bool) []string {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	return runScriptOver(t, h, fast, pipes{inR, inW, outR, outW})
}

// pipes are a session's two streams: the wall reads inR and writes outW.
type pipes struct {
	inR  io.Reader
	inW  io.WriteCloser
	outR io.Reader
	outW io.WriteCloser
}

// osPipes are two OS pipes, as a process's stdin and stdout are.
func osPipes(t *testing.T) pipes {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, f := range []*os.File{inR, inW, outR, outW} {
			f.Close()
		}
	})
	return pipes{inR, inW, outR, outW}
}

// runScriptOver is runScript over the streams p.
func runScriptOver(t *testing.T, h *hub.Hub, fast bool, p pipes) []string {
	t.Helper()
	inR, inW, outR, outW := p.inR, p.inW, p.outR, p.outW
	tr := &mcpwall.GuardedTransport{In: inR, Out: outW}
	done := make(chan error, 1)
	go func() {
		done <- serve(mcpwall.NewServer(h, "stdio"), tr, fast)
		outW.Close()
	}()
	lines := bufio.NewReader(outR)
	var answers []string
	for _, msg := range fastScript {
		if _, err := io.WriteString(inW, msg+"\n"); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(msg, `"id"`) {
			answers = append(answers, "")
			continue
		}
		line, err := lines.ReadString('\n')
		if err != nil {
			t.Fatalf("%s: no answer: %v", msg, err)
		}
		answers = append(answers, line)
	}
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(15 * time.Minute):
		t.Fatal("the wall did not end after its input did")
	}
	return answers
}

// serve serves srv on tr: as the wall does (fast: srv.Run, the guard hands plain tool
// calls to the server's handler), or with the SDK's connection alone.
func serve(srv *mcpwall.Server, tr *mcpwall.GuardedTransport, fast bool) error {
	if fast {
		return srv.Run(context.Background(), tr)
	}
	return mcpwall.Run(context.Background(), srv.Server, tr)
}

// session is a client's initialized stdio session with srv served as the wall serves
// it, over in-memory pipes.
type session struct {
	t     *testing.T
	in    io.WriteCloser
	lines *bufio.Reader
	done  chan error
}

func openSession(t *testing.T, srv *mcpwall.Server) *session {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &session{t: t, in: inW, lines: bufio.NewReader(outR), done: make(chan error, 1)}
	go func() {
		s.done <- serve(srv, &mcpwall.GuardedTransport{In: inR, Out: outW}, true)
		outW.Close()
	}()
	s.ask(initializeMsg(1))
	s.send(initializedMsg)
	return s
}

// send writes msg as one line.
func (s *session) send(msg string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, msg+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

// ask sends msg and returns the next line the wall writes.
func (s *session) ask(msg string) string {
	s.t.Helper()
	s.send(msg)
	line, err := s.lines.ReadString('\n')
	if err != nil {
		s.t.Fatal(err)
	}
	return line
}

// end closes the client's end and returns what the wall wrote after the last line read,
// once its session is over.
func (s *session) end() string {
	s.t.Helper()
	s.in.Close()
	rest, err := io.ReadAll(s.lines)
	if err != nil {
		s.t.Fatal(err)
	}
	if err := <-s.done; err != nil {
		s.t.Fatal(err)
	}
	return string(rest)
}

// TestFastCallRefusesAnIDInFlight: a client that sends a second request with the id of
// a call not yet answered gets no second answer and runs no second call (the SDK refuses
// such a request the same way: nothing runs, nothing is answered), whether the guard or
// the SDK took the first. The first call's answer is held in the pipe (nobody reads it
// yet), so it is in flight when the second arrives.
func TestFastCallRefusesAnIDInFlight(t *testing.T) {
	for _, second := range []string{
		callMsg(5, "read_email", `{}`), // the fast path's
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"read_email","arguments":{},"_meta":{"progressToken":"p"}}}`, // the SDK's
	} {
		h, _ := walltest.NewTrial(t, "clean")
		c := openSession(t, mcpwall.NewServer(h, "stdio"))
		c.send(callMsg(5, "read_email", `{}`))
		c.send(second)
		c.send(callMsg(6, "read_email", `{}`))
		// Calls 5 and 6 ran (the hub counts a call before its answer is written), and the
		// second 5 was read before 6: it has been refused or run by now.
		fixture.Eventually(t, "calls 5 and 6 run", func() bool { return h.Stats().Calls >= 2 })
		rest := c.end()
		answers := strings.Split(strings.TrimSpace(string(rest)), "\n")
		if len(answers) != 2 || !strings.Contains(answers[0]+answers[1], `"id":5`) || !strings.Contains(answers[0]+answers[1], `"id":6`) {
			t.Errorf("second request %s\nwant one answer to 5 and one to 6, got %d:\n%s", second, len(answers), rest)
		}
		if n := h.Stats().Calls; n != 2 {
			t.Errorf("second request %s\nthe hub ran %d calls, want 2 (the second 5 refused)", second, n)
		}
		h.Close("test over")
	}
}

// TestFastCallClientThatDoesNotRead: a client that writes thousands of calls before it
// reads a single answer, over OS pipes (a process's stdio, where the guard answers on its
// reading goroutine): its answers fill the stdout pipe long before its last call is
// written, yet the guard goes on reading, every call is run once and answered once, and
// the guard took them all past the SDK. A guard that waited on a full stdout to write an
// answer would stop reading: both pipes full, neither side could go on.
func TestFastCallClientThatDoesNotRead(t *testing.T) {
	const calls = 3000 // ~450 KB of answers: seven times what a Linux pipe holds
	h, _ := walltest.NewTrial(t, "clean")
	p := osPipes(t)
	done := make(chan error, 1)
	go func() {
		done <- serve(mcpwall.NewServer(h, "stdio"), &mcpwall.GuardedTransport{In: p.inR, Out: p.outW}, true)
		p.outW.Close()
	}()
	lines := bufio.NewReader(p.outR)
	if _, err := io.WriteString(p.inW, initializeMsg(1)+"\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := lines.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	before := mcpwall.FastAnswered()
	written := make(chan error, 1)
	go func() {
		var b strings.Builder
		b.WriteString(initializedMsg + "\n")
		for i := range calls {
			b.WriteString(callMsg(100+i, "update_ticket", fmt.Sprintf(`{"field":"priority","value":"v%d"}`, i)) + "\n")
		}
		_, err := io.WriteString(p.inW, b.String())
		p.inW.Close()
		written <- err
	}()
	select {
	case err := <-written:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Minute):
		t.Fatal("the client could not write its calls: the guard stopped reading while its answers waited")
	}
	seen := map[string]bool{}
	for {
		line, err := lines.ReadString('\n')
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		id := line[strings.Index(line, `"id":`)+5:]
		id = id[:strings.IndexAny(id, ",}")]
		if seen[id] || !strings.Contains(line, "updated") {
			t.Fatalf("answer %s: seen before %v, or not the call's", line, seen[id])
		}
		seen[id] = true
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(seen) != calls || h.Stats().Calls != calls {
		t.Errorf("%d answers, %d calls run; want %d of each", len(seen), h.Stats().Calls, calls)
	}
	if n := mcpwall.FastAnswered() - before; n != calls {
		t.Errorf("the guard took %d calls past the SDK, want all %d", n, calls)
	}
}

// TestFastCallRunsTheServersMiddleware: a call the guard hands over goes through every
// middleware of the server, one added after NewServer included, on both transports: the
// guard skips the SDK connection's dispatch, not the server's logic. Each call is seen
// by the middleware once, the fast path was taken, and what the middleware answers in
// place of the tool is what the client gets.
func TestFastCallRunsTheServersMiddleware(t *testing.T) {
	watch := func(srv *mcpwall.Server) *atomic.Int64 {
		var seen atomic.Int64
		srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method != "tools/call" {
					return next(ctx, method, req)
				}
				seen.Add(1)
				if req.(*mcp.CallToolRequest).Params.Name == "read_email" {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "from the middleware"}}}, nil
				}
				return next(ctx, method, req)
			}
		})
		return &seen
	}
	check := func(t *testing.T, transport string, seen *atomic.Int64, before int64, answers []string, h *hub.Hub) {
		t.Helper()
		if n := seen.Load(); n != 2 {
			t.Errorf("%s: the middleware saw %d calls, want 2", transport, n)
		}
		if n := mcpwall.FastAnswered() - before; n != 2 {
			t.Errorf("%s: the guard handed over %d calls, want 2", transport, n)
		}
		if !strings.Contains(answers[0], "from the middleware") || !strings.Contains(answers[1], "updated") {
			t.Errorf("%s: answers %q", transport, answers)
		}
		if n := h.Stats().Calls; n != 1 {
			t.Errorf("%s: the hub ran %d calls, want 1 (read_email answered by the middleware)", transport, n)
		}
	}

	t.Run("stdio", func(t *testing.T) {
		h, _ := walltest.NewTrial(t, "clean")
		srv := mcpwall.NewServer(h, "stdio")
		seen := watch(srv)
		c := openSession(t, srv)
		before := mcpwall.FastAnswered()
		answers := []string{c.ask(callMsg(2, "read_email", `{}`)), c.ask(callMsg(3, "update_ticket", `{"field":"priority","value":"urgent"}`))}
		c.end()
		check(t, "stdio", seen, before, answers, h)
	})

	t.Run("http", func(t *testing.T) {
		h, _ := walltest.NewTrial(t, "clean")
		srv := mcpwall.NewServer(h, "http")
		seen := watch(srv)
		handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.Server }, &mcp.StreamableHTTPOptions{JSONResponse: true})
		ts := httptest.NewServer(mcpwall.GuardHTTP(h, handler, func(*http.Request) *mcpwall.Server { return srv }))
		t.Cleanup(ts.Close)
		c := walltest.NewRawMCP(t, ts.URL+"/mcp", nil)
		// The session's notifications/initialized is handled before the next call is
		// taken (a call behind a notification goes to the SDK): wait until it has been.
		fixture.Eventually(t, "notifications/initialized handled", func() bool { return h.Stats().Reach.Initialized >= 1 })
		before := mcpwall.FastAnswered()
		answers := []string{
			string(c.Call(t, callMsg(2, "read_email", `{}`))),
			string(c.Call(t, callMsg(3, "update_ticket", `{"field":"priority","value":"urgent"}`))),
		}
		check(t, "http", seen, before, answers, h)
	})
}

// waitingWorld is a world behind the wall that is not the simulated one (so its calls
// run beside the reading, as real servers' do): its read_email waits until its context
// ends, and says so.
type waitingWorld struct {
	*world.World
	entered chan struct{}
	ended   chan struct{}
}

func (w *waitingWorld) Call(ctx context.Context, t spec.Tool, args map[string]any, mode world.Mode) world.Reply {
	if t.Name == "read_email" {
		close(w.entered)
		<-ctx.Done()
		close(w.ended)
	}
	return w.World.Call(ctx, t, args, mode)
}

// TestFastCallCancelled: a notifications/cancelled of a call the stream guard handed
// over, behind which real servers are still working, ends that call's context, as the
// SDK ends its own; the guard goes on serving.
func TestFastCallCancelled(t *testing.T) {
	ww := &waitingWorld{entered: make(chan struct{}), ended: make(chan struct{})}
	h := walltest.NewHubOn(t, "clean", record.Discard(), func(s *spec.Spec) hub.ToolSource {
		ww.World = world.New(s)
		return ww
	})
	c := openSession(t, mcpwall.NewServer(h, "stdio"))
	before := mcpwall.FastAnswered()
	c.send(callMsg(2, "read_email", `{}`))
	<-ww.entered
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`)
	<-ww.ended // a context never ended leaves the test hanging until its deadline
	c.send(callMsg(3, "update_ticket", `{"field":"priority","value":"urgent"}`))
	if rest := c.end(); !strings.Contains(rest, `"id":3,"result"`) {
		t.Errorf("the call after the cancelled one: %s", rest)
	}
	if n := mcpwall.FastAnswered() - before; n != 2 {
		t.Errorf("the guard handed over %d calls, want 2", n)
	}
}

// TestServerIsCollected: nothing outlives a wall server once its session is over. A
// worker makes one for every stdio session of every trial; anything that kept them (a
// registry of servers, as the guard once had) would keep every trial's hub for good.
func TestServerIsCollected(t *testing.T) {
	h, _ := walltest.NewTrial(t, "clean")
	srv := mcpwall.NewServer(h, "stdio")
	gone := weak.Make(srv.Server)
	c := openSession(t, srv)
	c.ask(callMsg(2, "read_email", `{}`))
	c.end()
	srv, c = nil, nil
	fixture.Eventually(t, "the wall server collected", func() bool {
		runtime.GC()
		return gone.Value() == nil
	})
}
