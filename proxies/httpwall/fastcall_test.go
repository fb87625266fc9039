package httpwall_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/proxies/httpwall"
	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/proxies/internal/walltest"
	"github.com/crashwall/chaos/proxies/mcpwall"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// mcpStep is one request of a scripted MCP client over streamable HTTP.
type mcpStep struct {
	name   string
	method string // POST when ""
	// session is the session whose Mcp-Session-Id (and agreed protocol version) the
	// request carries: the one a step with open made, "" for the script's first;
	// "none" for no session, anything else is sent as it is.
	session string
	open    string // an initialize whose answer's Mcp-Session-Id is remembered by this name
	header  map[string]string
	body    string
	// tooLarge sends a call longer than the wall takes (made when sent: the test binary
	// keeps no 4 MiB string, which would slow its garbage collection and so the
	// benchmarks beside it).
	tooLarge bool
}

func callBody(id, tool, args string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
}

func initializeBody(id string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"script","version":"1"}}}`
}

const (
	initializedBody = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	urgent          = `{"field":"priority","value":"urgent"}`
)

// mcpScript is a client's sessions over streamable HTTP: plain tool calls the guard
// takes past the SDK, and everything it must leave to the SDK, hostile requests included.
var mcpScript = []mcpStep{
	{name: "a call with no session", session: "none", body: callBody("1", "update_ticket", urgent)},
	{name: "initialize", session: "none", open: "a", body: initializeBody("2")},
	{name: "initialized", body: initializedBody},
	{name: "tools/list", body: `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`},
	{name: "read_email", body: callBody("4", "read_email", `{}`)},
	{name: "update_ticket", body: callBody("5", "update_ticket", urgent)},
	{name: "update_ticket again", body: callBody("6", "update_ticket", urgent)},
	{name: "update_ticket assignee", body: callBody("7", "update_ticket", `{"field":"assignee","value":"payments"}`)},
	{name: "read_email with an unknown argument", body: callBody("8", "read_email", `{"name":"x"}`)},
	{name: "missing argument", body: callBody("9", "update_ticket", `{"field":"priority"}`)},
	{name: "wrong argument", body: callBody("10", "update_ticket", `{"field":"priority","value":7,"extra":1}`)},
	{name: "unknown tool", body: callBody("11", "no_such_tool", `{}`)},
	{name: "no arguments", body: `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"read_email"}}`},
	{name: "null arguments", body: `{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"read_email","arguments":null}}`},
	{name: "arguments first", body: `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"arguments":{},"name":"read_email"}}`},
	{name: "_meta", body: `{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"read_email","arguments":{},"_meta":{"progressToken":"p"}}}`},
	{name: "a name twice", body: `{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"read_email","name":"update_ticket","arguments":{}}}`},
	{name: "an escaped name", body: `{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"upd\u0061te_ticket","arguments":{"field":"priority","value":"low"}}}`},
	{name: "an id the SDK would alter", body: `{"jsonrpc":"2.0","id":1.50,"method":"tools/call","params":{"name":"read_email","arguments":{}}}`},
	{name: "an escaped string id", body: `{"jsonrpc":"2.0","id":"s\u0041","method":"tools/call","params":{"name":"read_email","arguments":{}}}`},
	{name: "a string id", body: callBody(`"call-18"`, "read_email", `{}`)},
	{name: "a number for a name", body: `{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":5}}`},
	{name: "params an array", body: `{"jsonrpc":"2.0","id":20,"method":"tools/call","params":[]}`},
	{name: "a call as a notification", body: `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"read_email","arguments":{}}}`},
	{name: "ping", body: `{"jsonrpc":"2.0","id":21,"method":"ping"}`},
	{name: "a cancellation of nothing", body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":21}}`},
	{name: "whitespace around", body: "\n  " + callBody("22", "read_email", `{}`) + "\n"},
	{name: "no protocol version header", header: map[string]string{"Mcp-Protocol-Version": ""}, body: callBody("23", "read_email", `{}`)},
	{name: "an older protocol version", header: map[string]string{"Mcp-Protocol-Version": "2025-03-26"}, body: callBody("24", "read_email", `{}`)},
	{name: "an unknown protocol version", header: map[string]string{"Mcp-Protocol-Version": "1999-01-01"}, body: callBody("25", "read_email", `{}`)},
	{name: "the sessionless protocol's version", header: map[string]string{"Mcp-Protocol-Version": "2026-07-28"}, body: callBody("26", "read_email", `{}`)},
	{name: "text/plain", header: map[string]string{"Content-Type": "text/plain"}, body: callBody("27", "update_ticket", urgent)},
	{name: "JSON with a charset", header: map[string]string{"Content-Type": "application/json; charset=utf-8"}, body: callBody("28", "read_email", `{}`)},
	{name: "Accept JSON only", header: map[string]string{"Accept": "application/json"}, body: callBody("29", "update_ticket", urgent)},
	{name: "no Accept", header: map[string]string{"Accept": ""}, body: callBody("30", "update_ticket", urgent)},
	{name: "Accept anything", header: map[string]string{"Accept": "*/*"}, body: callBody("31", "read_email", `{}`)},
	{name: "Last-Event-ID", header: map[string]string{"Last-Event-ID": "x_1"}, body: callBody("32", "update_ticket", urgent)},
	{name: "a forged session", session: "0123456789ABCDEFGHIJKLMNOP", body: callBody("33", "update_ticket", urgent)},
	{name: "a body too large", tooLarge: true},
	{name: "not JSON", body: `{"jsonrpc":"2.0","id":35,"method":"tools/call",`},
	{name: "a batch", body: "[" + callBody("36", "read_email", `{}`) + "]"},
	{name: "a second session", session: "none", open: "b", body: initializeBody("37")},
	{name: "a call in the second session before it is initialized", session: "b", body: callBody("38", "read_email", `{}`)},
	{name: "the second session initialized", session: "b", body: initializedBody},
	{name: "a call in the second session", session: "b", body: callBody("39", "update_ticket", urgent)},
	{name: "the same id in both sessions", session: "b", body: callBody("5", "read_email", `{}`)},
	{name: "delete the first session", method: http.MethodDelete, body: ""},
	{name: "a call in the deleted session", body: callBody("40", "update_ticket", urgent)},
	{name: "delete it again", method: http.MethodDelete, body: ""},
	{name: "the second session lives on", session: "b", body: callBody("41", "read_email", `{}`)},
	{name: "an initialize without params", session: "none", open: "c", body: `{"jsonrpc":"2.0","id":42,"method":"initialize"}`},
	{name: "a call in the failed session", session: "c", body: callBody("43", "read_email", `{}`)},
	{name: "an initialize its session refuses", session: "none", open: "d", body: `{"jsonrpc":"2.0","id":46,"method":"initialize","params":{"protocolVersion":5}}`},
	{name: "a call in the refused session", session: "d", body: callBody("47", "read_email", `{}`)},
	{name: "GET without an event stream", method: http.MethodGet, session: "b", header: map[string]string{"Accept": "application/json"}},
	{name: "PUT", method: http.MethodPut, session: "b", body: callBody("44", "read_email", `{}`)},
	{name: "delete the second session", method: http.MethodDelete, session: "b"},
	{name: "a call in it after", session: "b", body: callBody("45", "read_email", `{}`)},
}

// runMCPScript sends mcpScript to the MCP endpoint url, each request answered before
// the next, and returns the answers as text: status, headers (but Date, with session
// ids named as the script names them) and body.
func runMCPScript(t *testing.T, url string) []string {
	t.Helper()
	client := &http.Client{}
	t.Cleanup(client.CloseIdleConnections)
	type session struct{ id, protocol string }
	sessions := map[string]session{}
	first := ""
	var answers []string
	for _, st := range mcpScript {
		c := &walltest.RawMCP{URL: url, Client: client}
		name := st.session
		if name == "" {
			name = first
		}
		if s, ok := sessions[name]; ok {
			c.Session, c.Protocol = s.id, s.protocol
		} else if name != "none" {
			c.Session = name
		}
		method := st.method
		if method == "" {
			method = http.MethodPost
		}
		body := st.body
		if st.tooLarge {
			body = callBody("34", "update_ticket", `{"field":"priority","value":"`+strings.Repeat("u", mcpwall.MaxMessageBytes)+`"}`)
		}
		a := c.Do(t, method, body, st.header)
		if st.open != "" {
			var protocol string
			if a.Status == http.StatusOK {
				if _, after, ok := strings.Cut(string(a.Body), `"protocolVersion":"`); ok {
					protocol, _, _ = strings.Cut(after, `"`)
				}
			}
			sessions[st.open] = session{a.Header.Get("Mcp-Session-Id"), protocol}
			if first == "" {
				first = st.open
			}
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%d\n", a.Status)
		keys := make([]string, 0, len(a.Header))
		for k := range a.Header {
			if k != "Date" {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			v := strings.Join(a.Header.Values(k), ", ")
			for n, s := range sessions {
				if s.id != "" {
					v = strings.ReplaceAll(v, s.id, "<session "+n+">")
				}
			}
			fmt.Fprintf(&b, "%s: %s\n", k, v)
		}
		b.Write(a.Body)
		answers = append(answers, b.String())
	}
	return answers
}

// serveMCP serves h on a loopback port with the guard's own answers or with the SDK's
// alone, and returns the MCP endpoint's URL.
func serveMCP(t testing.TB, h *hub.Hub, fast bool) string {
	t.Helper()
	handler := httpwall.Handler(h)
	if !fast {
		handler = httpwall.HandlerSDKOnly(h)
	}
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// TestFastHTTPSameAnswers: for every condition of the example spec (every fault family
// on every tool it applies to), a scripted client over streamable HTTP gets the same
// answers (status, headers and bytes) whether the guard takes plain tool calls past the SDK
// or the SDK answers everything, the hub counts the same calls, faults and contacts, and
// the record holds the same rows but for their times; and the guard did answer calls
// itself. The script holds what a client must be refused too: no session, a forged or
// deleted session, another session's id, a body too large, headers the SDK refuses.
func TestFastHTTPSameAnswers(t *testing.T) {
	conds := walltest.ExampleConditions(t)
	for _, c := range conds {
		t.Run(c.ID, func(t *testing.T) {
			sdkHub, sdkRecord := walltest.NewTrial(t, c.ID)
			fastHub, fastRecord := walltest.NewTrial(t, c.ID)
			before := mcpwall.FastAnswered()
			sdk := runMCPScript(t, serveMCP(t, sdkHub, false))
			if n := mcpwall.FastAnswered() - before; n != 0 {
				t.Fatalf("the SDK's handler alone: the guard took %d calls past the SDK", n)
			}
			fast := runMCPScript(t, serveMCP(t, fastHub, true))
			if n := mcpwall.FastAnswered() - before; n < 16 {
				t.Errorf("the guard took %d calls past the SDK, want at least 16: the fast path was not taken", n)
			}
			for i, st := range mcpScript {
				if sdk[i] != fast[i] {
					t.Errorf("%s:\n the SDK answers\n%s\n the guard answers\n%s", st.name, sdk[i], fast[i])
				}
			}
			walltest.SameEnding(t, sdkHub, sdkRecord, fastHub, fastRecord)
		})
	}
}

// gatedWorld is the example's world with one read_email held: the second lookup of
// read_email after armed (the first is the wall asking whether it is a tool, the
// second Hub.Call's, before the hub takes its lock) waits for release, so that the
// call stays in flight while the rest of the hub works.
type gatedWorld struct {
	*world.World
	mu       sync.Mutex
	lookups  int // of read_email since armed; -1 while not armed
	entered  chan struct{}
	released chan struct{}
}

func (g *gatedWorld) Tool(name string) (spec.Tool, bool) {
	if name == "read_email" {
		g.mu.Lock()
		hold := false
		if g.lookups >= 0 {
			g.lookups++
			hold = g.lookups == 2
		}
		g.mu.Unlock()
		if hold {
			close(g.entered)
			<-g.released
		}
	}
	return g.World.Tool(name)
}

// TestFastHTTPRefusesAnIDInFlight: a call whose id is that of a call in flight in the
// same session is refused at once (400, the SDK's duplicate-id error) and runs nothing,
// whichever path has the first call and whichever would take the second; another id is
// served meanwhile (5.0 too, which the SDK gets as another id), and the id is free again
// once answered. The SDK's handler alone answers the same.
func TestFastHTTPRefusesAnIDInFlight(t *testing.T) {
	plain := callBody("5", "read_email", `{}`)
	withMeta := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"read_email","arguments":{},"_meta":{"progressToken":"p"}}}`
	// 5.0 is another id to the SDK (GuardHTTP hands it over aliased): served, not refused.
	other := callBody("5.0", "read_email", `{}`)
	for _, firstSecond := range [][2]string{{plain, plain}, {plain, withMeta}, {withMeta, plain}, {withMeta, withMeta}, {plain, other}, {withMeta, other}} {
		refused := firstSecond[1] != other
		var refusals []string
		for _, fast := range []bool{true, false} {
			name := fmt.Sprintf("fast=%v first=%s second=%s", fast, firstSecond[0], firstSecond[1])
			gate := &gatedWorld{lookups: -1, entered: make(chan struct{}), released: make(chan struct{})}
			h := walltest.NewHubOn(t, faults.CleanID, record.Discard(), func(s *spec.Spec) hub.ToolSource {
				gate.World = world.New(s)
				return gate
			})
			c := walltest.NewRawMCP(t, serveMCP(t, h, fast), nil)
			gate.mu.Lock()
			gate.lookups = 0
			gate.mu.Unlock()
			firstAnswer := make(chan walltest.RawAnswer, 1)
			go func() { firstAnswer <- c.Post(t, firstSecond[0], nil) }()
			select {
			case <-gate.entered:
			case a := <-firstAnswer:
				t.Fatalf("%s: the first call was answered without reaching the world: %d %s", name, a.Status, a.Body)
			case <-time.After(15 * time.Minute):
				t.Fatalf("%s: the first call never reached the world", name)
			}
			second := c.Post(t, firstSecond[1], nil)
			if refused && (second.Status != http.StatusBadRequest || !strings.Contains(string(second.Body), `"message":"duplicate in-flight request ID 5"`)) {
				t.Errorf("%s: the second call with id 5 is answered %d %s, want 400 duplicate in-flight request ID 5", name, second.Status, second.Body)
			}
			if !refused && (second.Status != http.StatusOK || !strings.Contains(string(second.Body), `"id":5.0,"result"`)) {
				t.Errorf("%s: the call with id 5.0 is answered %d %s, want its result", name, second.Status, second.Body)
			}
			refusals = append(refusals, fmt.Sprintf("%d %s %s", second.Status, second.Header.Get("Content-Type"), second.Body))
			if six := c.Call(t, callBody("6", "update_ticket", urgent)); !strings.Contains(string(six), `"id":6,"result"`) {
				t.Errorf("%s: a call with another id, meanwhile: %s", name, six)
			}
			close(gate.released)
			if a := <-firstAnswer; a.Status != http.StatusOK || !strings.Contains(string(a.Body), `"id":5,"result"`) {
				t.Errorf("%s: the first call is answered %d %s", name, a.Status, a.Body)
			}
			if again := c.Call(t, plain); !strings.Contains(string(again), `"id":5,"result"`) {
				t.Errorf("%s: id 5 once answered is free again, but: %s", name, again)
			}
			if n, want := h.Stats().Calls, map[bool]int{true: 3, false: 4}[refused]; n != want {
				t.Errorf("%s: the hub ran %d calls, want %d", name, n, want)
			}
		}
		if refusals[0] != refusals[1] {
			t.Errorf("the guard refuses with\n%s\nthe SDK with\n%s", refusals[0], refusals[1])
		}
	}
}

// TestFastHTTPClients: the clients that reach the hub over streamable HTTP, the MCP Go
// SDK's and the stdio bridge (`chaos wall --hub`), get their plain tool calls answered
// by the guard once their session has handled their notifications/initialized, recorded
// with their own transport.
func TestFastHTTPClients(t *testing.T) {
	for _, c := range []struct {
		transport string
		connect   func(testing.TB, *hub.Hub) *mcp.ClientSession
	}{
		{"http", walltest.ConnectHTTP},
		{"stdio", walltest.ConnectBridge},
	} {
		t.Run(c.transport, func(t *testing.T) {
			h, path := walltest.NewTrial(t, faults.CleanID)
			cs := c.connect(t, h)
			before := mcpwall.FastAnswered()
			if text, isErr := walltest.CallText(t, cs, "update_ticket", map[string]any{"field": "priority", "value": "urgent"}); isErr || text != walltest.UpdateReply {
				t.Fatalf("update_ticket: %q (error %v)", text, isErr)
			}
			if text, _ := walltest.CallText(t, cs, "read_email", nil); text != walltest.EmailReply {
				t.Fatalf("read_email: %q", text)
			}
			// The first may go to the SDK, behind the client's notifications/initialized
			// if its session has not handled it yet (TestFastHTTPCallsWaitForANotification);
			// the second comes after that.
			if n := mcpwall.FastAnswered() - before; n < 1 {
				t.Errorf("the guard took %d of the client's 2 calls past the SDK, want the second at least", n)
			}
			calls := walltest.ReadRecord(t, path).Calls()
			if len(calls) != 2 {
				t.Fatalf("%d calls recorded, want 2", len(calls))
			}
			for _, row := range calls {
				if row.Transport != c.transport {
					t.Errorf("%s recorded with transport %q, want %q", row.Tool, row.Transport, c.transport)
				}
			}
		})
	}
}
