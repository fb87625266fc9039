package proxies

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
)

// The transport tests drive the hub with real clients (the MCP Go SDK's client over
// stdio pipes and streamable HTTP, net/http for REST) and check what the agent receives
// against what the record says happened.

const exampleSpec = "../examples/support-ticket.yaml"

// The example's fixed texts, as the spec writes them.
const (
	emailReply  = `{"ticket": "T-4821", "from": "dana@example.com", "date": "2026-11-02", "subject": "Checkout broken for all EU customers", "body": "Since this morning no customer in the EU can pay. This is urgent, please route to the payments team."}`
	updateReply = `{"status": "updated"}`
)

// newTrial is a hub for one condition of the example spec, recording to a file that
// the test reads back. The hub is closed at cleanup.
func newTrial(tb testing.TB, condID string) (*Hub, string) {
	tb.Helper()
	path := tb.TempDir() + "/record.jsonl"
	rec, err := record.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	return newHub(tb, condID, rec), path
}

func newHub(tb testing.TB, condID string, rec *record.Writer) *Hub {
	tb.Helper()
	s, err := spec.Load(exampleSpec)
	if err != nil {
		tb.Fatal(err)
	}
	conds, err := faults.Generate(s)
	if err != nil {
		tb.Fatal(err)
	}
	cond, ok := faults.Find(conds, condID)
	if !ok {
		tb.Fatalf("the example has no condition %q", condID)
	}
	h, err := NewHub(Config{Spec: s, Condition: cond, Seed: s.Seed, Trial: tb.Name(), Record: rec})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { h.Close("test over") })
	return h
}

// serveHTTP serves the hub on a loopback port until the test ends.
func serveHTTP(tb testing.TB, h *Hub) *Server {
	tb.Helper()
	srv, err := Serve(h, "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { srv.Close() })
	return srv
}

// pipes are the two ends of a stdio connection made of io.Pipes.
type pipes struct {
	serverIn  *io.PipeReader // what the wall reads (its stdin)
	clientOut *io.PipeWriter // what the client writes
	clientIn  *io.PipeReader // what the client reads
	serverOut *io.PipeWriter // what the wall writes (its stdout)
}

func newPipes() pipes {
	var p pipes
	p.serverIn, p.clientOut = io.Pipe()
	p.clientIn, p.serverOut = io.Pipe()
	return p
}

// served is a wall running over pipes: done is closed when it returns err.
type served struct {
	done chan struct{}
	err  error
}

// runWall runs serve (ServeStdio or Bridge) over pipes. At cleanup the client's end is
// closed and the test waits for the wall to stop.
func runWall(tb testing.TB, serve func(ctx context.Context, in io.Reader, out io.Writer) error) (pipes, *served) {
	tb.Helper()
	p := newPipes()
	w := &served{done: make(chan struct{})}
	go func() {
		w.err = serve(context.Background(), p.serverIn, p.serverOut)
		p.serverOut.Close()
		close(w.done)
	}()
	tb.Cleanup(func() {
		p.clientOut.Close()
		p.clientIn.Close()
		select {
		case <-w.done:
		case <-time.After(10 * time.Second):
			tb.Error("the wall did not stop after its stdin was closed")
		}
	})
	return p, w
}

// connect connects the SDK's client over t, closing the session at cleanup.
func connect(tb testing.TB, t mcp.Transport) *mcp.ClientSession {
	tb.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "transport-test", Version: "0"}, nil)
	cs, err := c.Connect(context.Background(), t, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close() })
	return cs
}

func connectStdio(tb testing.TB, h *Hub) *mcp.ClientSession {
	p, _ := runWall(tb, func(ctx context.Context, in io.Reader, out io.Writer) error { return ServeStdio(ctx, h, in, out) })
	return connect(tb, &mcp.IOTransport{Reader: p.clientIn, Writer: p.clientOut})
}

func connectHTTP(tb testing.TB, h *Hub) *mcp.ClientSession {
	srv := serveHTTP(tb, h)
	return connect(tb, &mcp.StreamableClientTransport{Endpoint: srv.MCPURL()})
}

func connectBridge(tb testing.TB, h *Hub) *mcp.ClientSession {
	srv := serveHTTP(tb, h)
	p, _ := runWall(tb, func(ctx context.Context, in io.Reader, out io.Writer) error { return Bridge(ctx, srv.URL, in, out) })
	return connect(tb, &mcp.IOTransport{Reader: p.clientIn, Writer: p.clientOut})
}

// mcpTransports are the ways an MCP client reaches the hub, with the transport the
// record names for each: the bridge forwards over HTTP but records stdio, since that
// is what the agent spoke.
var mcpTransports = []struct {
	name    string
	connect func(testing.TB, *Hub) *mcp.ClientSession
	record  string
}{
	{"stdio", connectStdio, "stdio"},
	{"http", connectHTTP, "http"},
	{"bridge", connectBridge, "stdio"},
	{"stream", connectStream, "stdio"}, // the relay's: stream_test.go
}

// callText calls a tool and returns its text and error flag; a JSON-RPC error fails the test.
func callText(tb testing.TB, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	tb.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		tb.Fatalf("%s(%v): %v", tool, args, err)
	}
	return resultText(res), res.IsError
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// readRecord reads the record as it stands (the writer writes a row per call, so
// it can be read mid-trial).
func readRecord(tb testing.TB, path string) *record.Log {
	tb.Helper()
	l, err := record.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

func jsonEqual(tb testing.TB, a, b any) bool {
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

func TestMCPListTools(t *testing.T) {
	for _, tr := range mcpTransports {
		t.Run(tr.name, func(t *testing.T) {
			h, _ := newTrial(t, faults.CleanID)
			cs := tr.connect(t, h)
			list, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			// The SDK lists tools by name, not in the spec's order.
			listed := map[string]*mcp.Tool{}
			for _, tool := range list.Tools {
				listed[tool.Name] = tool
			}
			if len(list.Tools) != len(h.Tools()) {
				t.Errorf("listed %d tools, want %d", len(list.Tools), len(h.Tools()))
			}
			for _, w := range h.Tools() {
				got, ok := listed[w.Name]
				if !ok {
					t.Errorf("%s is not listed", w.Name)
					continue
				}
				if got.Description != w.Description {
					t.Errorf("%s: description %q, want %q", w.Name, got.Description, w.Description)
				}
				if !jsonEqual(t, got.InputSchema, InputSchema(w)) {
					t.Errorf("%s: input schema %v, want %s", w.Name, got.InputSchema, InputSchema(w))
				}
				// The example's tools carry annotations derived from their effect, so
				// that clients which gate on them (Codex) call them.
				wantHints := `{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}`
				if w.Effect == spec.EffectWrite {
					wantHints = `{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":true,"openWorldHint":false}`
				}
				if !jsonEqual(t, got.Annotations, json.RawMessage(wantHints)) {
					b, _ := json.Marshal(got.Annotations)
					t.Errorf("%s: annotations %s, want %s", w.Name, b, wantHints)
				}
			}
		})
	}
}

// TestMCPPhantomSuccess plays the example's task under phantom_success@update_ticket on
// every MCP transport: the agent is told the first update worked, the world and the
// record say it did not, and every transport tells the agent the same things.
func TestMCPPhantomSuccess(t *testing.T) {
	var first []string
	for _, tr := range mcpTransports {
		t.Run(tr.name, func(t *testing.T) {
			h, path := newTrial(t, "phantom_success@update_ticket")
			cs := tr.connect(t, h)
			steps := []struct {
				tool string
				args map[string]any
				want string
			}{
				{"read_email", nil, emailReply},
				{"update_ticket", map[string]any{"field": "priority", "value": "urgent"}, updateReply}, // faulted: not stored
				{"update_ticket", map[string]any{"field": "team", "value": "payments"}, updateReply},
				{"get_ticket_field", map[string]any{"field": "priority"}, `{"field":"priority","value":"normal"}`},
				{"get_ticket_field", map[string]any{"field": "team"}, `{"field":"team","value":"payments"}`},
			}
			var got []string
			for _, st := range steps {
				text, isErr := callText(t, cs, st.tool, st.args)
				if isErr || text != st.want {
					t.Errorf("%s(%v) = %q (error %v), want %q", st.tool, st.args, text, isErr, st.want)
				}
				got = append(got, text)
			}
			if first == nil {
				first = got
			} else if !reflect.DeepEqual(got, first) {
				t.Errorf("replies differ from the first transport's:\n got %q\nwant %q", got, first)
			}

			calls := readRecord(t, path).Calls()
			if len(calls) != len(steps) {
				t.Fatalf("record has %d call rows, want %d", len(calls), len(steps))
			}
			for i, row := range calls {
				if row.Transport != tr.record || row.Tool != steps[i].tool || row.Reply != got[i] {
					t.Errorf("row %d = %s %s %q, want %s %s %q", i, row.Transport, row.Tool, row.Reply, tr.record, steps[i].tool, got[i])
				}
			}
			hit := calls[1]
			if hit.Hit == nil || !hit.Hit.Fired || hit.Hit.Performed || hit.Hit.Family != "phantom_success" {
				t.Errorf("faulted row hit = %+v, want fired, phantom_success, not performed", hit.Hit)
			}
			if hit.State["priority"] != "normal" {
				t.Errorf("state after the faulted write = %v, want priority still normal", hit.State)
			}
			if calls[2].Hit == nil || calls[2].Hit.Fired || !calls[2].Hit.Performed {
				t.Errorf("second write hit = %+v, want not fired, performed", calls[2].Hit)
			}
		})
	}
}

// TestMCPRefusals: what the hub refuses before a tool (bad arguments, an unknown tool)
// is a JSON-RPC error on every transport; what a tool fails is a result with isError.
func TestMCPRefusals(t *testing.T) {
	for _, tr := range mcpTransports {
		t.Run(tr.name, func(t *testing.T) {
			h, path := newTrial(t, "transient_error@update_ticket")
			cs := tr.connect(t, h)
			ctx := context.Background()

			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "update_ticket", Arguments: map[string]any{"field": "priority"}})
			var we *jsonrpc.Error
			if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams || !strings.Contains(we.Message, "value") {
				t.Errorf("missing argument: error %v, want JSON-RPC %d naming \"value\"", err, jsonrpc.CodeInvalidParams)
			}
			_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "delete_ticket", Arguments: map[string]any{"id": 7}})
			if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams || !strings.Contains(we.Message, `unknown tool "delete_ticket" (tools: `) {
				t.Errorf("unknown tool: error %v, want JSON-RPC %d from the hub naming delete_ticket and the tools there are", err, jsonrpc.CodeInvalidParams)
			}

			text, isErr := callText(t, cs, "update_ticket", map[string]any{"field": "priority", "value": "urgent"})
			if !isErr || !strings.Contains(text, faults.TextUnavailable) {
				t.Errorf("transient error: %q (error %v), want an isError result with %q", text, isErr, faults.TextUnavailable)
			}
			if text, isErr := callText(t, cs, "update_ticket", map[string]any{"field": "priority", "value": "urgent"}); isErr || text != updateReply {
				t.Errorf("retry: %q (error %v), want %q", text, isErr, updateReply)
			}

			l := readRecord(t, path)
			var rejected []record.Row
			for _, r := range l.Rows {
				if r.Type == record.TypeRejected {
					rejected = append(rejected, r)
				}
			}
			if len(rejected) != 2 || rejected[0].Status != 400 || rejected[0].Transport != tr.record ||
				rejected[1].Status != 404 || rejected[1].Tool != "delete_ticket" || string(rejected[1].Args) != `{"id":7}` || rejected[1].Transport != tr.record {
				t.Errorf("rejected rows = %+v, want the bad arguments as a 400 and the unknown tool with its arguments as a 404, on %s", rejected, tr.record)
			}
			calls := l.Calls()
			if len(calls) != 2 || calls[0].Status != 503 || !calls[0].IsError || calls[1].State["priority"] != "urgent" {
				t.Errorf("call rows = %+v, want a 503 then the stored retry", calls)
			}
		})
	}
}

// restCase is one REST request against a fresh hub, after some setup calls.
type restCase struct {
	name   string
	cond   string
	before []string // bodies posted to update_ticket first
	method string
	tool   string
	body   string
	status int
	// want is in the error message (for an error status) or is the reply (200).
	want string
	// row is the type of the row the request leaves in the record ("" for none: it
	// never reached the hub).
	row string
}

func TestREST(t *testing.T) {
	priority := `{"field":"priority","value":"urgent"}`
	const call, rejected = record.TypeCall, record.TypeRejected
	cases := []restCase{
		{"reply", faults.CleanID, nil, "POST", "update_ticket", priority, 200, updateReply, call},
		{"source with empty body", faults.CleanID, nil, "POST", "read_email", "", 200, emailReply, call},
		{"tool failure", "transient_error@update_ticket", nil, "POST", "update_ticket", priority, 503, faults.TextUnavailable, call},
		{"session drop", "session_drop@update_ticket", []string{priority}, "POST", "update_ticket", priority, 401, faults.TextSessionEnded, call},
		{"array body", faults.CleanID, nil, "POST", "update_ticket", `[1]`, 400, "must be a JSON object, got an array", rejected},
		{"string body", faults.CleanID, nil, "POST", "update_ticket", `"x"`, 400, "must be a JSON object, got a string", rejected},
		{"malformed body", faults.CleanID, nil, "POST", "update_ticket", `{bad`, 400, "not valid JSON", rejected},
		{"missing argument", faults.CleanID, nil, "POST", "update_ticket", `{"field":"priority"}`, 400, `missing properties: ["value"]`, rejected},
		{"wrong type", faults.CleanID, nil, "POST", "update_ticket", `{"field":"priority","value":3}`, 400, "/properties/value", rejected},
		{"empty body to a write", faults.CleanID, nil, "POST", "update_ticket", "", 400, `missing properties: ["field" "value"]`, rejected},
		{"unknown tool", faults.CleanID, nil, "POST", "close_ticket", priority, 404, `unknown tool "close_ticket"`, rejected},
		{"GET", faults.CleanID, nil, "GET", "update_ticket", "", 405, "use POST /tools/update_ticket", ""},
		{"too large", faults.CleanID, nil, "POST", "update_ticket", `{"field":"` + strings.Repeat("x", MaxMessageBytes) + `"}`, 413, "body too large", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, path := newTrial(t, c.cond)
			srv := serveHTTP(t, h)
			for _, b := range c.before {
				if st, body := restCall(t, "POST", srv.URL+"/tools/update_ticket", b); st != 200 {
					t.Fatalf("setup call: %d %s", st, body)
				}
			}
			rowsBefore := len(readRecord(t, path).Rows)
			status, body := restCall(t, c.method, srv.URL+"/tools/"+c.tool, c.body)
			if status != c.status {
				t.Fatalf("status %d (%s), want %d", status, body, c.status)
			}
			if !json.Valid(body) {
				t.Fatalf("body is not JSON: %s", body)
			}
			if status == 200 {
				if string(body) != c.want {
					t.Errorf("reply %s, want %s", body, c.want)
				}
			} else {
				var e struct {
					Error string `json:"error"`
				}
				if err := json.Unmarshal(body, &e); err != nil || !strings.Contains(e.Error, c.want) {
					t.Errorf("body %s, want {\"error\": ...} containing %q", body, c.want)
				}
			}

			// The record has what the hub answered, as the agent got it.
			rows := readRecord(t, path).Rows[rowsBefore:]
			if c.row == "" {
				if len(rows) != 0 {
					t.Errorf("a request that never reached the hub left rows: %+v", rows)
				}
				return
			}
			if len(rows) != 1 {
				t.Fatalf("%d rows for one request, want 1: %+v", len(rows), rows)
			}
			r := rows[0]
			if r.Type != c.row || r.Transport != "rest" || r.Tool != c.tool || r.Status != c.status {
				t.Errorf("row = %s %s %s %d, want %s rest %s %d", r.Type, r.Transport, r.Tool, r.Status, c.row, c.tool, c.status)
			}
		})
	}
}

func restCall(tb testing.TB, method, url, body string) (int, []byte) {
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

func TestOpenAPI(t *testing.T) {
	h, _ := newTrial(t, faults.CleanID)
	srv := serveHTTP(t, h)
	resp, err := http.Get(srv.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		OpenAPI string `json:"openapi"`
		Servers []struct {
			URL string `json:"url"`
		} `json:"servers"`
		Paths map[string]struct {
			Post struct {
				OperationID string `json:"operationId"`
				Summary     string `json:"summary"`
				RequestBody struct {
					Content map[string]struct {
						Schema json.RawMessage `json:"schema"`
					} `json:"content"`
				} `json:"requestBody"`
				Responses map[string]any `json:"responses"`
			} `json:"post"`
		} `json:"paths"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatalf("openapi.json is not valid JSON: %v", err)
	}
	if doc.OpenAPI != "3.1.0" || len(doc.Servers) != 1 || doc.Servers[0].URL != srv.URL {
		t.Errorf("openapi %q servers %+v, want 3.1.0 at %s", doc.OpenAPI, doc.Servers, srv.URL)
	}
	if len(doc.Paths) != len(h.Tools()) {
		t.Errorf("%d paths, want one per tool (%d)", len(doc.Paths), len(h.Tools()))
	}
	for _, tool := range h.Tools() {
		p, ok := doc.Paths["/tools/"+tool.Name]
		if !ok {
			t.Errorf("no path for %s", tool.Name)
			continue
		}
		if p.Post.OperationID != tool.Name || p.Post.Summary != tool.Description {
			t.Errorf("%s: operationId %q summary %q", tool.Name, p.Post.OperationID, p.Post.Summary)
		}
		if !jsonEqual(t, p.Post.RequestBody.Content["application/json"].Schema, InputSchema(tool)) {
			t.Errorf("%s: request schema %s, want %s", tool.Name, p.Post.RequestBody.Content["application/json"].Schema, InputSchema(tool))
		}
		for _, code := range []string{"200", "400", "401", "404", "503"} {
			if _, ok := p.Post.Responses[code]; !ok {
				t.Errorf("%s: no %s response described", tool.Name, code)
			}
		}
	}

	resp, err = http.Get(srv.URL + "/tools")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tools []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tools); err != nil {
		t.Fatal(err)
	}
	for i, tool := range h.Tools() {
		if i >= len(tools) || tools[i].Name != tool.Name || tools[i].Description != tool.Description || !jsonEqual(t, tools[i].InputSchema, InputSchema(tool)) {
			t.Errorf("GET /tools = %+v, want the spec's tools in order", tools)
			break
		}
	}
}

// TestEvents follows GET /events while calls are made on two transports: each row
// arrives as its call is answered, and the stream ends with the session end.
func TestEvents(t *testing.T) {
	h, _ := newTrial(t, "phantom_success@update_ticket")
	srv := serveHTTP(t, h)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/x-ndjson" {
		t.Errorf("Content-Type %q", ct)
	}
	// The handler subscribes before it answers, so from here on no row is missed.
	rows := bufio.NewScanner(resp.Body)
	next := func() record.Row {
		t.Helper()
		if !rows.Scan() {
			t.Fatalf("event stream ended: %v", rows.Err())
		}
		var r record.Row
		if err := json.Unmarshal(rows.Bytes(), &r); err != nil {
			t.Fatalf("event %q: %v", rows.Text(), err)
		}
		return r
	}

	restCall(t, "POST", srv.URL+"/tools/update_ticket", `{"field":"priority","value":"urgent"}`)
	if r := next(); r.Type != record.TypeCall || r.Transport != "rest" || r.Hit == nil || !r.Hit.Fired {
		t.Errorf("first event = %+v, want the faulted REST call", r)
	}
	cs := connectHTTP(t, h)
	callText(t, cs, "get_ticket_field", map[string]any{"field": "priority"})
	if r := next(); r.Type != record.TypeCall || r.Transport != "http" || r.Reply != `{"field":"priority","value":"normal"}` {
		t.Errorf("second event = %+v, want the MCP read of the unchanged priority", r)
	}
	restCall(t, "POST", srv.URL+"/tools/update_ticket", `[1]`)
	if r := next(); r.Type != record.TypeRejected || r.Status != 400 {
		t.Errorf("third event = %+v, want the rejected call", r)
	}
	h.Close("test over")
	if r := next(); r.Type != record.TypeSessionEnd || r.FinalState["priority"] != "normal" || r.Calls != 2 || r.Fired != 1 {
		t.Errorf("last event = %+v, want the session end with the final state", r)
	}
	if rows.Scan() {
		t.Errorf("event after the session end: %s", rows.Text())
	}
}

// TestReachCounts checks what the hub counts of an agent's contacts besides tool calls,
// which is how a trial without a tool call says how far the agent got (report.Reach):
// nothing before anyone connects; an MCP client's initialize and its initialized
// notification on every MCP transport; a REST listing as a contact without a session.
func TestReachCounts(t *testing.T) {
	for _, tr := range mcpTransports {
		t.Run(tr.name, func(t *testing.T) {
			h, _ := newTrial(t, faults.CleanID)
			if got := h.Stats().Reach; got != (Reach{}) {
				t.Fatalf("before any client: %+v, want zero", got)
			}
			cs := tr.connect(t, h)
			if _, err := cs.ListTools(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			// This SDK speaks the sessionless protocol where it can (no initialize);
			// its tools/list shows it ready either way.
			st := h.Stats()
			if st.Initialized < 1 || st.Contacts < 2 || st.Calls != 0 {
				t.Errorf("after tools/list: %+v, want initialized >= 1, contacts >= 2, no call", st)
			}
		})
	}
	t.Run("initialize never completed", func(t *testing.T) {
		// A client of the 2025 protocol that sends initialize and stops there.
		h, _ := newTrial(t, faults.CleanID)
		srv := serveHTTP(t, h)
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"stalled","version":"0"}}}`
		req, _ := http.NewRequest("POST", srv.MCPURL(), strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if got, want := h.Stats().Reach, (Reach{Contacts: 1, Initializing: 1}); got != want {
			t.Errorf("after initialize alone: %+v, want %+v", got, want)
		}
	})
	t.Run("rest", func(t *testing.T) {
		h, _ := newTrial(t, faults.CleanID)
		srv := serveHTTP(t, h)
		resp, err := http.Get(srv.URL + "/openapi.json")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got, want := h.Stats().Reach, (Reach{Contacts: 1}); got != want {
			t.Errorf("after GET /openapi.json: %+v, want %+v", got, want)
		}
	})
}
