package proxies

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/record"
)

// These tests write JSON-RPC by hand: they test the guard in front of the SDK, so the
// requests must be ones no well-behaved client would send.

// rpcResponse is a JSON-RPC response as it arrives on the wire.
type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// idText is the echoed id as JSON text ("absent" when the member is missing).
func (r *rpcResponse) idText() string {
	if r.ID == nil {
		return "absent"
	}
	return string(r.ID)
}

// rawWall is a wall spoken to one hand-written message at a time. send returns the
// response, or nil when the message gets none (a notification, a stray response).
type rawWall interface {
	send(tb testing.TB, msg string, wantReply bool) *rpcResponse
}

const protocolVersion = "2025-11-25"

func initializeMsg(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`, id, protocolVersion)
}

const initializedMsg = `{"jsonrpc":"2.0","method":"notifications/initialized"}`

func callMsg(id int, tool string, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args)
}

// stdioRaw speaks to ServeStdio over pipes, a line at a time.
type stdioRaw struct {
	w     io.Writer
	lines chan []byte
	wall  *served
}

func newStdioRaw(tb testing.TB, h *Hub) *stdioRaw {
	p, wall := runWall(tb, func(ctx context.Context, in io.Reader, out io.Writer) error { return ServeStdio(ctx, h, in, out) })
	r := &stdioRaw{w: p.clientOut, lines: make(chan []byte, 16), wall: wall}
	go func() {
		defer close(r.lines)
		br := bufio.NewReader(p.clientIn)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				r.lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
	return r
}

func (r *stdioRaw) send(tb testing.TB, msg string, wantReply bool) *rpcResponse {
	tb.Helper()
	// The write is waited on, not trusted: a wall that stopped reading would block it.
	written := make(chan error, 1)
	go func() {
		_, err := io.WriteString(r.w, msg+"\n")
		written <- err
	}()
	select {
	case err := <-written:
		if err != nil {
			tb.Fatalf("write to the wall: %v", err)
		}
	case <-r.wall.done:
		r.stopped(tb)
	case <-time.After(10 * time.Second):
		tb.Fatal("the wall did not read the message in 10s")
	}
	if !wantReply {
		return nil
	}
	return r.recv(tb)
}

func (r *stdioRaw) recv(tb testing.TB) *rpcResponse {
	tb.Helper()
	select {
	case line, ok := <-r.lines:
		if !ok {
			<-r.wall.done
			r.stopped(tb)
		}
		var resp rpcResponse
		if err := json.Unmarshal(line, &resp); err != nil || resp.JSONRPC != "2.0" {
			tb.Fatalf("the wall wrote %q, not a JSON-RPC response (%v)", line, err)
		}
		return &resp
	case <-time.After(10 * time.Second):
		tb.Fatal("no response from the wall in 10s")
	}
	return nil
}

// stopped fails the test: the wall has stopped serving.
func (r *stdioRaw) stopped(tb testing.TB) {
	tb.Helper()
	tb.Fatalf("the wall stopped serving: ServeStdio returned %v", r.wall.err)
}

// httpRaw speaks to POST /mcp, one request per message, in one MCP session.
type httpRaw struct {
	url     string
	session string
}

func (r *httpRaw) send(tb testing.TB, msg string, wantReply bool) *rpcResponse {
	tb.Helper()
	status, resp := r.post(tb, msg)
	if !wantReply {
		if status != http.StatusAccepted {
			tb.Errorf("status %d for a message with no reply, want 202", status)
		}
		return nil
	}
	if resp == nil {
		tb.Fatalf("status %d with no JSON-RPC response", status)
	}
	// A message refused before it reached the session is a client error (400); the
	// hub's refusal of a call is an answer within the session (200).
	want := http.StatusOK
	if resp.Error != nil && resp.Error.Code != jsonrpc.CodeInvalidParams {
		want = http.StatusBadRequest
	}
	if status != want {
		tb.Errorf("status %d for %+v, want %d", status, resp.Error, want)
	}
	return resp
}

func (r *httpRaw) post(tb testing.TB, msg string) (int, *rpcResponse) {
	tb.Helper()
	req, err := http.NewRequest("POST", r.url, strings.NewReader(msg))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if r.session != "" {
		req.Header.Set("Mcp-Session-Id", r.session)
		req.Header.Set("Mcp-Protocol-Version", protocolVersion)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	if id := res.Header.Get("Mcp-Session-Id"); id != "" {
		r.session = id
	}
	body, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatal(err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return res.StatusCode, nil
	}
	data := body
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		data = nil
		for _, line := range strings.Split(string(body), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				data = []byte(d)
				break
			}
		}
	}
	var resp rpcResponse
	if err := json.Unmarshal(data, &resp); err != nil || resp.JSONRPC != "2.0" {
		tb.Fatalf("status %d, body %q: not a JSON-RPC response (%v)", res.StatusCode, body, err)
	}
	return res.StatusCode, &resp
}

// badMessage is a message the wall must answer with an error and survive.
type badMessage struct {
	name string
	msg  string
	code int64
	id   string // the id the error echoes: null when the message had none we could read
	// in is a word the error's message must contain.
	in string
}

var badMessages = []badMessage{
	{"malformed JSON", `{"jsonrpc":"2.0","id":2,"method":"tools/list"`, jsonrpc.CodeParseError, "null", "not valid JSON"},
	{"not JSON-RPC", `{"foo":1}`, jsonrpc.CodeInvalidRequest, "null", "not a JSON-RPC 2.0 message"},
	{"wrong version", `{"jsonrpc":"1.0","id":3,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "3", "version"},
	{"JSON null", `null`, jsonrpc.CodeInvalidRequest, "null", "JSON-RPC"},
	{"id of the wrong type", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, jsonrpc.CodeInvalidRequest, "null", "ID"},
	{"batch", `[{"jsonrpc":"2.0","id":6,"method":"ping"}]`, jsonrpc.CodeInvalidRequest, "null", "batches are not supported"},
	{"unknown method", `{"jsonrpc":"2.0","id":7,"method":"nope"}`, jsonrpc.CodeMethodNotFound, "7", "nope"},
	{"oversized", `{"jsonrpc":"2.0","id":8,"method":"ping","params":{"pad":"` + strings.Repeat("x", MaxMessageBytes) + `"}}`, jsonrpc.CodeInvalidRequest, "8", "too large"},
	{"oversized, id after the cut", `{"jsonrpc":"2.0","method":"ping","params":{"pad":"` + strings.Repeat("x", MaxMessageBytes) + `"},"id":14}`, jsonrpc.CodeInvalidRequest, "null", "too large"},
	{"arguments not matching the schema", callMsg(9, "update_ticket", `{"field":"priority"}`), jsonrpc.CodeInvalidParams, "9", "value"},
	{"arguments of the wrong type", callMsg(10, "update_ticket", `{"field":"priority","value":["urgent"]}`), jsonrpc.CodeInvalidParams, "10", "value"},
	{"arguments not an object", callMsg(11, "update_ticket", `"priority=urgent"`), jsonrpc.CodeInvalidParams, "11", "object"},
	{"call without params", `{"jsonrpc":"2.0","id":13,"method":"tools/call"}`, jsonrpc.CodeInvalidRequest, "13", "params"},
	{"unknown tool", callMsg(12, "close_ticket", `{}`), jsonrpc.CodeInvalidParams, "12", "close_ticket"},
}

// checkSurvives sends each bad message and then a valid call: the error must be a
// proper JSON-RPC error, and the call after it must work.
func checkSurvives(t *testing.T, w rawWall) {
	for i, c := range badMessages {
		t.Run(c.name, func(t *testing.T) {
			resp := w.send(t, c.msg, true)
			if resp.Error == nil {
				t.Fatalf("result %s, want error %d", resp.Result, c.code)
			}
			if resp.Error.Code != c.code || resp.idText() != c.id || !strings.Contains(resp.Error.Message, c.in) {
				t.Errorf("error %d %q id %s, want %d containing %q id %s", resp.Error.Code, resp.Error.Message, resp.idText(), c.code, c.in, c.id)
			}
			checkCallWorks(t, w, 1000+i)
		})
	}
}

func checkCallWorks(t *testing.T, w rawWall, id int) {
	t.Helper()
	resp := w.send(t, callMsg(id, "update_ticket", `{"field":"priority","value":"urgent"}`), true)
	var res struct {
		Content []struct{ Text string } `json:"content"`
		IsError bool                    `json:"isError"`
	}
	if resp.Error != nil || resp.idText() != fmt.Sprint(id) {
		t.Fatalf("the call after it: id %s error %+v, want a result for id %d", resp.idText(), resp.Error, id)
	}
	if err := json.Unmarshal(resp.Result, &res); err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].Text != updateReply {
		t.Fatalf("the call after it: result %s, want %s", resp.Result, updateReply)
	}
}

func initialize(t *testing.T, w rawWall) {
	t.Helper()
	if resp := w.send(t, initializeMsg(1), true); resp.Error != nil || resp.idText() != "1" {
		t.Fatalf("initialize: %+v", resp)
	}
	w.send(t, initializedMsg, false)
}

func TestStdioGuard(t *testing.T) {
	h, path := newTrial(t, faults.CleanID)
	w := newStdioRaw(t, h)
	initialize(t, w)
	checkSurvives(t, w)

	// Messages that are served or ignored, and must not end the session either.
	quiet := []struct {
		name      string
		msg       string
		wantReply bool
	}{
		{"blank line", "   ", false},
		{"trailing whitespace", `{"jsonrpc":"2.0","id":20,"method":"ping"}` + " \t", true},
		{"CRLF", `{"jsonrpc":"2.0","id":21,"method":"ping"}` + "\r", true},
		{"response nobody asked for", `{"jsonrpc":"2.0","id":99,"result":{}}`, false},
	}
	for i, q := range quiet {
		t.Run(q.name, func(t *testing.T) {
			if resp := w.send(t, q.msg, q.wantReply); resp != nil && resp.Error != nil {
				t.Errorf("error %+v, want the message served", resp.Error)
			}
			checkCallWorks(t, w, 2000+i)
		})
	}
	select {
	case <-w.wall.done:
		t.Fatalf("the wall stopped: %v", w.wall.err)
	default:
	}

	// Each line the guard refused is an error row; each call the hub refused is a
	// rejected row, the unknown tool among them.
	l := readRecord(t, path)
	var errs, rejected int
	for _, r := range l.Rows {
		switch r.Type {
		case record.TypeError:
			if r.Transport != "stdio" || r.Reason == "" {
				t.Errorf("error row %+v, want the stdio transport and a reason", r)
			}
			errs++
		case record.TypeRejected:
			rejected++
		}
	}
	if errs != 8 || rejected != 4 {
		t.Errorf("record has %d error rows and %d rejected rows, want 8 and 4", errs, rejected)
	}
}

func TestHTTPGuard(t *testing.T) {
	h, _ := newTrial(t, faults.CleanID)
	srv := serveHTTP(t, h)
	w := &httpRaw{url: srv.MCPURL()}
	initialize(t, w)
	if w.session == "" {
		t.Fatal("no Mcp-Session-Id after initialize")
	}
	checkSurvives(t, w)
}

// TestServeStdioEnds: the wall returns when its client closes stdin, with no error,
// and the hub is left for its owner to close.
func TestServeStdioEnds(t *testing.T) {
	h, _ := newTrial(t, faults.CleanID)
	p := newPipes()
	done := make(chan error, 1)
	go func() { done <- ServeStdio(context.Background(), h, p.serverIn, p.serverOut) }()
	cs := connect(t, &mcp.IOTransport{Reader: p.clientIn, Writer: p.clientOut})
	callText(t, cs, "read_email", nil)
	cs.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeStdio = %v, want nil when stdin closes", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeStdio did not return after stdin closed")
	}
	if st := h.Stats(); st.Calls != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestBridgeUnreachable: a bridge to a hub that is not there says so.
func TestBridgeUnreachable(t *testing.T) {
	h, _ := newTrial(t, faults.CleanID)
	srv := serveHTTP(t, h)
	url := srv.URL
	srv.Close()
	p := newPipes()
	err := Bridge(context.Background(), url, p.serverIn, p.serverOut)
	if err == nil || !strings.Contains(err.Error(), "cannot reach the hub at "+url) {
		t.Errorf("Bridge = %v, want it to name the unreachable hub", err)
	}
}

// TestHubClosed: calls after the session ended are refused on every transport, and
// nothing more reaches the record.
func TestHubClosed(t *testing.T) {
	h, path := newTrial(t, faults.CleanID)
	srv := serveHTTP(t, h)
	cs := connectHTTP(t, h)
	callText(t, cs, "update_ticket", map[string]any{"field": "team", "value": "payments"})
	if err := h.Close("agent exited"); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_email"}); err == nil || !strings.Contains(err.Error(), "the wall is closed") {
		t.Errorf("MCP call after close: %v, want the wall is closed", err)
	}
	if st, body := restCall(t, "POST", srv.URL+"/tools/read_email", ""); st != 503 || !strings.Contains(string(body), "the wall is closed") {
		t.Errorf("REST call after close: %d %s", st, body)
	}
	l := readRecord(t, path)
	if l.End == nil || l.End.Reason != "agent exited" || l.End.FinalState["team"] != "payments" || &l.Rows[len(l.Rows)-1] != l.End {
		t.Errorf("record end %+v, want the last row to be the session end with the final state", l.End)
	}
}

// TestHalfClose: a client that writes its requests and closes its end of stdin (a piped
// script) gets an answer to every one, and the hub records every call, on the stdio
// wall and on the bridge alike, 100 sessions in a row: a race between the end of input
// and the answers in flight would lose some of them in some sessions.
func TestHalfClose(t *testing.T) {
	const sessions, calls = 100, 6
	var in strings.Builder
	in.WriteString(initializeMsg(1) + "\n" + initializedMsg + "\n")
	for i := range calls {
		if i%2 == 0 {
			in.WriteString(callMsg(10+i, "update_ticket", fmt.Sprintf(`{"field":"f%d","value":"v%d"}`, i, i)) + "\n")
		} else {
			in.WriteString(callMsg(10+i, "read_email", `{}`) + "\n")
		}
	}
	serves := []struct {
		name  string
		serve func(tb testing.TB, h *Hub) func(ctx context.Context, in io.Reader, out io.Writer) error
	}{
		{"stdio", func(tb testing.TB, h *Hub) func(ctx context.Context, in io.Reader, out io.Writer) error {
			return func(ctx context.Context, in io.Reader, out io.Writer) error { return ServeStdio(ctx, h, in, out) }
		}},
		{"bridge", func(tb testing.TB, h *Hub) func(ctx context.Context, in io.Reader, out io.Writer) error {
			srv := serveHTTP(tb, h)
			return func(ctx context.Context, in io.Reader, out io.Writer) error { return Bridge(ctx, srv.URL, in, out) }
		}},
	}
	for _, s := range serves {
		t.Run(s.name, func(t *testing.T) {
			for n := range sessions {
				h, path := newTrial(t, faults.CleanID)
				var out bytes.Buffer
				// strings.Reader ends at once after the last request: the half-close.
				if err := s.serve(t, h)(context.Background(), strings.NewReader(in.String()), &out); err != nil {
					t.Fatalf("session %d: the wall returned %v", n, err)
				}
				answered := map[string]bool{}
				for _, line := range splitLines(out.Bytes()) {
					var resp rpcResponse
					if err := json.Unmarshal(line, &resp); err != nil {
						t.Fatalf("session %d: the wall wrote %q: %v", n, line, err)
					}
					if resp.Error != nil {
						t.Errorf("session %d: id %s answered with error %+v", n, resp.idText(), resp.Error)
					}
					answered[resp.idText()] = true
				}
				for i := range calls {
					if id := fmt.Sprint(10 + i); !answered[id] {
						t.Errorf("session %d: request %s was not answered (answers: %v)", n, id, answered)
					}
				}
				if err := h.Close("client closed stdin"); err != nil {
					t.Fatal(err)
				}
				l := readRecord(t, path)
				if got := len(l.Calls()); got != calls || l.End == nil {
					t.Fatalf("session %d: record has %d calls and end %v, want %d calls and a session end", n, got, l.End, calls)
				}
				if t.Failed() {
					t.Fatalf("failed in session %d of %d", n, sessions)
				}
			}
		})
	}
}

// oddIDs are request ids a client may send (JSON-RPC allows any string or number) that
// the SDK alone would not echo byte for byte.
var oddIDs = []string{
	`1180591620717411303424`,  // 2^70
	`-1180591620717411303424`, // -2^70
	`9007199254740993`,        // 2^53+1: not a float64
	`9223372036854775808`,     // 2^63: not an int64
	`1.5`, `1.0`, `1e3`, `-0`, `0`, `-3`, `42`,
	`"abc"`, `""`, `"1180591620717411303424"`, `"\u00e9\n"`,
}

// TestIDsEchoed: every answer carries its request's id exactly as the client wrote it,
// whoever answers (the tool, the SDK, the guard), on stdio and on HTTP.
func TestIDsEchoed(t *testing.T) {
	walls := []struct {
		name string
		open func(t *testing.T) rawWall
	}{
		{"stdio", func(t *testing.T) rawWall {
			h, _ := newTrial(t, faults.CleanID)
			return newStdioRaw(t, h)
		}},
		{"http", func(t *testing.T) rawWall {
			h, _ := newTrial(t, faults.CleanID)
			return &httpRaw{url: serveHTTP(t, h).MCPURL()}
		}},
	}
	messages := []struct {
		name  string
		msg   func(id string) string
		error bool
	}{
		{"ping", func(id string) string { return `{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}` }, false},
		{"tool call", func(id string) string {
			return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"read_email","arguments":{}}}`
		}, false},
		{"unknown method", func(id string) string { return `{"jsonrpc":"2.0","id":` + id + `,"method":"nope"}` }, true},
		{"wrong version", func(id string) string { return `{"jsonrpc":"1.0","id":` + id + `,"method":"ping"}` }, true},
		{"oversized", func(id string) string {
			return `{"jsonrpc":"2.0","id":` + id + `,"method":"ping","params":{"pad":"` + strings.Repeat("x", MaxMessageBytes) + `"}}`
		}, true},
	}
	for _, wl := range walls {
		t.Run(wl.name, func(t *testing.T) {
			w := wl.open(t)
			initialize(t, w)
			for _, m := range messages {
				t.Run(m.name, func(t *testing.T) {
					for _, id := range oddIDs {
						resp := w.send(t, m.msg(id), true)
						if resp.idText() != id {
							t.Errorf("id %s came back as %s", id, resp.idText())
						}
						if (resp.Error != nil) != m.error {
							t.Errorf("id %s: error %+v, want error %v", id, resp.Error, m.error)
						}
					}
				})
			}
		})
	}
}

// TestWallCodexConfig checks the {codex_config} override as Codex reads it: one TOML
// key=value whose value is an inline table naming the wall's command, its arguments and
// the approval that lets codex exec call its tools, required so that Codex waits for it
// before its first model call; a path with quotes, backslashes or
// control characters stays one TOML string. (Codex 0.171 was run with this override,
// offline against the stand-in model: it started the wall and listed its tools.)
func TestWallCodexConfig(t *testing.T) {
	tests := []struct{ bin, hub, want string }{
		{"/usr/bin/chaos", "http://127.0.0.1:4000",
			`mcp_servers.chaos={command = "/usr/bin/chaos", args = ["wall", "--hub", "http://127.0.0.1:4000"], default_tools_approval_mode = "approve", required = true}`},
		{`/opt/my "tools"\chaos`, "http://127.0.0.1:1",
			`mcp_servers.chaos={command = "/opt/my \"tools\"\\chaos", args = ["wall", "--hub", "http://127.0.0.1:1"], default_tools_approval_mode = "approve", required = true}`},
		{"/tmp/a\tb\n", "http://127.0.0.1:1",
			`mcp_servers.chaos={command = "/tmp/a\u0009b\u000A", args = ["wall", "--hub", "http://127.0.0.1:1"], default_tools_approval_mode = "approve", required = true}`},
	}
	for _, tt := range tests {
		t.Run(tt.bin, func(t *testing.T) {
			if got := WallCodexConfig(tt.bin, tt.hub); got != tt.want {
				t.Errorf("WallCodexConfig(%q) =\n%s\nwant\n%s", tt.bin, got, tt.want)
			}
		})
	}
}
