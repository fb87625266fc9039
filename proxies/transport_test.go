package proxies_test

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
	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/proxies/internal/walltest"
	"github.com/crashwall/chaos/proxies/mcpwall"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
)

// The transport tests drive the hub with real clients (the MCP Go SDK's client over
// stdio pipes and streamable HTTP, net/http for REST) and check what the agent receives
// against what the record says happened.

// mcpTransports are the ways an MCP client reaches the hub, with the transport the
// record names for each: the bridge forwards over HTTP but records stdio, since that
// is what the agent spoke.
var mcpTransports = []struct {
	name    string
	connect func(testing.TB, *hub.Hub) *mcp.ClientSession
	record  string
}{
	{"stdio", walltest.ConnectStdio, "stdio"},
	{"http", walltest.ConnectHTTP, "http"},
	{"bridge", walltest.ConnectBridge, "stdio"},
	{"stream", walltest.ConnectStream, "stdio"}, // the relay's: stream_test.go
}

func TestMCPListTools(t *testing.T) {
	for _, tr := range mcpTransports {
		t.Run(tr.name, func(t *testing.T) {
			h, _ := walltest.NewTrial(t, faults.CleanID)
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
				if !walltest.JSONEqual(t, got.InputSchema, hub.InputSchema(w)) {
					t.Errorf("%s: input schema %v, want %s", w.Name, got.InputSchema, hub.InputSchema(w))
				}
				// The example's tools carry annotations derived from their effect, so
				// that clients which gate on them (Codex) call them.
				wantHints := `{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}`
				if w.Effect == spec.EffectWrite {
					wantHints = `{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":true,"openWorldHint":false}`
				}
				if !walltest.JSONEqual(t, got.Annotations, json.RawMessage(wantHints)) {
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
			h, path := walltest.NewTrial(t, "phantom_success@update_ticket")
			cs := tr.connect(t, h)
			steps := []struct {
				tool string
				args map[string]any
				want string
			}{
				{"read_email", nil, walltest.EmailReply},
				{"update_ticket", map[string]any{"field": "priority", "value": "urgent"}, walltest.UpdateReply}, // faulted: not stored
				{"update_ticket", map[string]any{"field": "team", "value": "payments"}, walltest.UpdateReply},
				{"get_ticket_field", map[string]any{"field": "priority"}, `{"field":"priority","value":"normal"}`},
				{"get_ticket_field", map[string]any{"field": "team"}, `{"field":"team","value":"payments"}`},
			}
			var got []string
			for _, st := range steps {
				text, isErr := walltest.CallText(t, cs, st.tool, st.args)
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

			calls := walltest.ReadRecord(t, path).Calls()
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
			h, path := walltest.NewTrial(t, "transient_error@update_ticket")
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

			text, isErr := walltest.CallText(t, cs, "update_ticket", map[string]any{"field": "priority", "value": "urgent"})
			if !isErr || !strings.Contains(text, faults.TextUnavailable) {
				t.Errorf("transient error: %q (error %v), want an isError result with %q", text, isErr, faults.TextUnavailable)
			}
			if text, isErr := walltest.CallText(t, cs, "update_ticket", map[string]any{"field": "priority", "value": "urgent"}); isErr || text != walltest.UpdateReply {
				t.Errorf("retry: %q (error %v), want %q", text, isErr, walltest.UpdateReply)
			}

			l := walltest.ReadRecord(t, path)
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
		{"reply", faults.CleanID, nil, "POST", "update_ticket", priority, 200, walltest.UpdateReply, call},
		{"source with empty body", faults.CleanID, nil, "POST", "read_email", "", 200, walltest.EmailReply, call},
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
		{"too large", faults.CleanID, nil, "POST", "update_ticket", `{"field":"` + strings.Repeat("x", mcpwall.MaxMessageBytes) + `"}`, 413, "body too large", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, path := walltest.NewTrial(t, c.cond)
			srv := walltest.ServeHTTP(t, h)
			for _, b := range c.before {
				if st, body := walltest.RestCall(t, "POST", srv.URL+"/tools/update_ticket", b); st != 200 {
					t.Fatalf("setup call: %d %s", st, body)
				}
			}
			rowsBefore := len(walltest.ReadRecord(t, path).Rows)
			status, body := walltest.RestCall(t, c.method, srv.URL+"/tools/"+c.tool, c.body)
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
			rows := walltest.ReadRecord(t, path).Rows[rowsBefore:]
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

func TestOpenAPI(t *testing.T) {
	h, _ := walltest.NewTrial(t, faults.CleanID)
	srv := walltest.ServeHTTP(t, h)
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
		if !walltest.JSONEqual(t, p.Post.RequestBody.Content["application/json"].Schema, hub.InputSchema(tool)) {
			t.Errorf("%s: request schema %s, want %s", tool.Name, p.Post.RequestBody.Content["application/json"].Schema, hub.InputSchema(tool))
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
		if i >= len(tools) || tools[i].Name != tool.Name || tools[i].Description != tool.Description || !walltest.JSONEqual(t, tools[i].InputSchema, hub.InputSchema(tool)) {
			t.Errorf("GET /tools = %+v, want the spec's tools in order", tools)
			break
		}
	}
}

// TestEvents follows GET /events while calls are made on two transports: each row
// arrives as its call is answered, and the stream ends with the session end.
func TestEvents(t *testing.T) {
	h, _ := walltest.NewTrial(t, "phantom_success@update_ticket")
	srv := walltest.ServeHTTP(t, h)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
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

	walltest.RestCall(t, "POST", srv.URL+"/tools/update_ticket", `{"field":"priority","value":"urgent"}`)
	if r := next(); r.Type != record.TypeCall || r.Transport != "rest" || r.Hit == nil || !r.Hit.Fired {
		t.Errorf("first event = %+v, want the faulted REST call", r)
	}
	cs := walltest.ConnectHTTP(t, h)
	walltest.CallText(t, cs, "get_ticket_field", map[string]any{"field": "priority"})
	if r := next(); r.Type != record.TypeCall || r.Transport != "http" || r.Reply != `{"field":"priority","value":"normal"}` {
		t.Errorf("second event = %+v, want the MCP read of the unchanged priority", r)
	}
	walltest.RestCall(t, "POST", srv.URL+"/tools/update_ticket", `[1]`)
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
			h, _ := walltest.NewTrial(t, faults.CleanID)
			if got := h.Stats().Reach; got != (hub.Reach{}) {
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
		h, _ := walltest.NewTrial(t, faults.CleanID)
		srv := walltest.ServeHTTP(t, h)
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
		if got, want := h.Stats().Reach, (hub.Reach{Contacts: 1, Initializing: 1}); got != want {
			t.Errorf("after initialize alone: %+v, want %+v", got, want)
		}
	})
	t.Run("rest", func(t *testing.T) {
		h, _ := walltest.NewTrial(t, faults.CleanID)
		srv := walltest.ServeHTTP(t, h)
		resp, err := http.Get(srv.URL + "/openapi.json")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got, want := h.Stats().Reach, (hub.Reach{Contacts: 1}); got != want {
			t.Errorf("after GET /openapi.json: %+v, want %+v", got, want)
		}
	})
}
