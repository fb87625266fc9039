package upstream_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/probes"
	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/proxies/internal/walltest"
	"github.com/crashwall/chaos/proxies/mcpwall"
	"github.com/crashwall/chaos/proxies/upstream"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
)

// notesServer is a real MCP server over streamable HTTP with its own state: notes by
// title. It counts the calls that reach it and the Authorization headers it saw.
type notesServer struct {
	URL   string
	srv   *httptest.Server
	mu    sync.Mutex
	notes map[string]string
	calls []string
	auth  []string
}

func boolPtr(b bool) *bool { return &b }

func startNotes(tb testing.TB) *notesServer { return startNotesOver(tb, false) }

// startNotesOver is startNotes, over the older HTTP+SSE transport when sse (its URL is
// then the SSE endpoint, and messages go to the URL the stream's first event names).
func startNotesOver(tb testing.TB, sse bool) *notesServer {
	tb.Helper()
	n := &notesServer{notes: map[string]string{}}
	s := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1"}, nil)
	obj := func(props string, req ...string) json.RawMessage {
		r, _ := json.Marshal(req)
		return json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{%s},"required":%s}`, props, r))
	}
	s.AddTool(&mcp.Tool{Name: "save_note", Description: "Saves a note.", InputSchema: obj(`"title":{"type":"string"},"body":{"type":"string"}`, "title", "body"),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(false)}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ Title, Body string }
			json.Unmarshal(req.Params.Arguments, &a)
			n.mu.Lock()
			n.notes[a.Title] = a.Body
			n.calls = append(n.calls, "save_note "+a.Title)
			n.mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Saved note " + a.Title}}, StructuredContent: map[string]any{"saved": a.Title}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "get_note", Description: "Reads a note.", InputSchema: obj(`"title":{"type":"string"}`, "title"),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ Title string }
			json.Unmarshal(req.Params.Arguments, &a)
			n.mu.Lock()
			body, ok := n.notes[a.Title]
			n.calls = append(n.calls, "get_note "+a.Title)
			n.mu.Unlock()
			if !ok {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no note " + a.Title}}}, nil
			}
			v := map[string]any{"title": a.Title, "body": body}
			b, _ := json.Marshal(v)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: v}, nil
		})
	s.AddTool(&mcp.Tool{Name: "list_notes", Description: "All notes.", InputSchema: obj(``)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			n.mu.Lock()
			defer n.mu.Unlock()
			b, _ := json.Marshal(n.notes)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "ping", Description: "Is anyone there?", InputSchema: obj(``)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, nil
		})
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	if sse {
		h = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.mu.Lock()
		n.auth = append(n.auth, r.Header.Get("Authorization"))
		n.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	tb.Cleanup(srv.Close)
	n.URL, n.srv = srv.URL, srv
	return n
}

func (n *notesServer) note(title string) (string, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	b, ok := n.notes[title]
	return b, ok
}

func (n *notesServer) saves() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	k := 0
	for _, c := range n.calls {
		if strings.HasPrefix(c, "save_note") {
			k++
		}
	}
	return k
}

func notesSpec(url string) *spec.Spec {
	return &spec.Spec{Name: "notes", Tasks: []spec.Task{{ID: "t", Prompt: "save a note"}},
		Servers: []spec.Server{{Name: "notes", URL: url, Headers: map[string]string{"Authorization": "Bearer ${NOTES_TOKEN}"}}}}
}

func lookupToken(name string) (string, bool) {
	if name == "NOTES_TOKEN" {
		return "sekrit-token-42", true
	}
	return "", false
}

// upstreamHub opens the notes server behind a hub with cond armed (by id).
func upstreamHub(t *testing.T, n *notesServer, condID string) (*hub.Hub, *upstream.Upstream, string) {
	t.Helper()
	return hubOver(t, upstream.UpstreamConfig{Spec: notesSpec(n.URL), Lookup: lookupToken}, condID)
}

// hubOver opens the upstream cfg names and a hub over it armed with condID; it returns
// the hub, the upstream and the record's path, and closes the hub when the test ends.
func hubOver(t *testing.T, cfg upstream.UpstreamConfig, condID string) (*hub.Hub, *upstream.Upstream, string) {
	t.Helper()
	up, err := upstream.OpenUpstream(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := up.Spec()
	conds, err := faults.Generate(s)
	if err != nil {
		t.Fatal(err)
	}
	cond, ok := faults.Find(conds, condID)
	if !ok {
		t.Fatalf("no condition %s in %v", condID, faults.IDs(conds))
	}
	path := filepath.Join(t.TempDir(), "record.jsonl")
	rec, err := record.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := hub.NewHub(hub.Config{Spec: s, Condition: cond, Seed: 3, Trial: "t/1", Record: rec, Source: up})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close("test cleanup") })
	return h, up, path
}

func call(t *testing.T, h *hub.Hub, tool, args string) (text string, structured string, isErr bool) {
	t.Helper()
	r, err := h.Call(context.Background(), "http", tool, json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s %s: %v", tool, args, err)
	}
	return r.Text, r.Structured, r.IsError
}

func TestUpstreamClassifies(t *testing.T) {
	n := startNotes(t)
	s := notesSpec(n.URL)
	s.Servers[0].Tools = map[string]spec.ServerTool{"ping": {Effect: spec.EffectNone}}
	got, classes, err := upstream.Discover(context.Background(), s, upstream.UpstreamConfig{Lookup: lookupToken})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"save_note":  "write annotation readOnlyHint: false",
		"get_note":   "read annotation readOnlyHint: true",
		"list_notes": `read name: "list_notes" starts with "list", a verb that reads`,
		"ping":       "none the spec (servers: notes: tools: ping: effect: none)",
	}
	for _, c := range classes {
		if w := want[c.Tool]; w != string(c.Effect)+" "+c.From {
			t.Errorf("%s: %s %s, want %s", c.Tool, c.Effect, c.From, w)
		}
	}
	if len(got.Tools) != 4 || got.Tools[0].Server != "notes" {
		t.Errorf("tools %+v", got.Tools)
	}
	if a := n.auth[0]; a != "Bearer sekrit-token-42" {
		t.Errorf("the server saw Authorization %q, want the expanded header", a)
	}
}

func TestUpstreamPrefixesCollidingNames(t *testing.T) {
	n1, n2 := startNotes(t), startNotes(t)
	s := notesSpec(n1.URL)
	s.Servers = append(s.Servers, spec.Server{Name: "other", URL: n2.URL})
	s.Tools = []spec.Tool{{Name: "ping", Effect: spec.EffectNone, Reply: `"simulated"`}}
	got, _, err := upstream.Discover(context.Background(), s, upstream.UpstreamConfig{Lookup: lookupToken})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range got.Tools {
		names = append(names, tl.Name)
	}
	want := "ping notes__get_note notes__list_notes notes__ping notes__save_note other__get_note other__list_notes other__ping other__save_note"
	if strings.Join(names, " ") != want {
		t.Errorf("tools %s\nwant  %s", strings.Join(names, " "), want)
	}
}

func TestUpstreamFaults(t *testing.T) {
	t.Run("phantom success never reaches the server", func(t *testing.T) {
		n := startNotes(t)
		h, _, path := upstreamHub(t, n, "phantom_success@save_note")
		text, st, isErr := call(t, h, "save_note", `{"title":"a","body":"x"}`)
		if isErr || text != `{"ok": true}` || st != "" {
			t.Errorf("fabricated reply %q %q %v, want {\"ok\": true} (no success seen yet)", text, st, isErr)
		}
		if _, ok := n.note("a"); ok || n.saves() != 0 {
			t.Errorf("the server got the fabricated write")
		}
		// The agent saves again: it goes through.
		call(t, h, "save_note", `{"title":"a","body":"x"}`)
		if b, ok := n.note("a"); !ok || b != "x" {
			t.Errorf("the second save did not reach the server")
		}
		h.Close("done")
		res, applies := probes.SwallowedWrites(walltest.ReadRecord(t, path))
		if !applies || !res.OK {
			t.Errorf("SwallowedWrites = %+v, %v; want the redone write seen", res, applies)
		}
	})
	t.Run("a fabricated success looks like the real one", func(t *testing.T) {
		n := startNotes(t)
		h, _, path := upstreamHub(t, n, "phantom_success@save_note#2")
		call(t, h, "save_note", `{"title":"first","body":"x"}`)
		text, st, _ := call(t, h, "save_note", `{"title":"second","body":"y"}`)
		if text != "Saved note second" || st != `{"saved":"second"}` {
			t.Errorf("fabricated %q %q, want the real shape with this call's title", text, st)
		}
		if _, ok := n.note("second"); ok {
			t.Errorf("the fabricated write reached the server")
		}
		h.Close("done")
		res, applies := probes.SwallowedWrites(walltest.ReadRecord(t, path))
		if !applies || res.OK {
			t.Errorf("SwallowedWrites = %+v, %v; want the lost write", res, applies)
		}
	})
	t.Run("transient error is not forwarded", func(t *testing.T) {
		n := startNotes(t)
		h, _, _ := upstreamHub(t, n, "transient_error@save_note")
		_, _, isErr := call(t, h, "save_note", `{"title":"a","body":"x"}`)
		if !isErr || n.saves() != 0 {
			t.Errorf("isErr %v, saves %d; want an error and no save", isErr, n.saves())
		}
	})
	t.Run("phantom failure is forwarded", func(t *testing.T) {
		n := startNotes(t)
		h, _, _ := upstreamHub(t, n, "phantom_failure@save_note")
		_, _, isErr := call(t, h, "save_note", `{"title":"a","body":"x"}`)
		if _, ok := n.note("a"); !isErr || !ok {
			t.Errorf("isErr %v, stored %v; want an error and the note stored", isErr, ok)
		}
	})
	t.Run("truncated reply drops the structured content", func(t *testing.T) {
		n := startNotes(t)
		h, _, _ := upstreamHub(t, n, "truncated_reply@get_note")
		call(t, h, "save_note", `{"title":"a","body":"some longer body text"}`)
		text, st, _ := call(t, h, "get_note", `{"title":"a"}`)
		if json.Valid([]byte(text)) || st != "" {
			t.Errorf("truncated %q structured %q; want cut text and no structured content", text, st)
		}
	})
	t.Run("premature read empties the structured content", func(t *testing.T) {
		n := startNotes(t)
		h, _, _ := upstreamHub(t, n, "premature_read@get_note")
		call(t, h, "save_note", `{"title":"a","body":"x"}`)
		text, st, _ := call(t, h, "get_note", `{"title":"a"}`)
		if text != `{"body":"","title":""}` || st != text {
			t.Errorf("premature %q structured %q", text, st)
		}
	})
	t.Run("stale read answers from before the last write", func(t *testing.T) {
		n := startNotes(t)
		h, _, _ := upstreamHub(t, n, "stale_read@get_note#2")
		call(t, h, "save_note", `{"title":"a","body":"old"}`)
		call(t, h, "get_note", `{"title":"a"}`)
		call(t, h, "save_note", `{"title":"a","body":"new"}`)
		text, st, _ := call(t, h, "get_note", `{"title":"a"}`)
		if text != `{"body":"old","title":"a"}` || st != text {
			t.Errorf("stale read %q %q, want the reply from before the last write", text, st)
		}
		if b, _ := n.note("a"); b != "new" {
			t.Errorf("the server holds %q, want new", b)
		}
	})
	t.Run("stale read with nothing seen before says it cannot apply", func(t *testing.T) {
		n := startNotes(t)
		h, _, _ := upstreamHub(t, n, "stale_read@get_note")
		call(t, h, "save_note", `{"title":"a","body":"old"}`)
		text, _, isErr := call(t, h, "get_note", `{"title":"a"}`)
		if !isErr || !strings.Contains(text, "stale_read cannot apply") {
			t.Errorf("reply %q %v", text, isErr)
		}
	})
	t.Run("simulated-only families are not generated", func(t *testing.T) {
		n := startNotes(t)
		up, err := upstream.OpenUpstream(context.Background(), upstream.UpstreamConfig{Spec: notesSpec(n.URL), Lookup: lookupToken})
		if err != nil {
			t.Fatal(err)
		}
		defer up.Close()
		conds, _ := faults.Generate(up.Spec())
		for _, c := range conds {
			if c.Family == "context_switch" || c.Family == "empty_success" {
				t.Errorf("generated %s for a real server", c.ID)
			}
		}
	})
}

func TestUpstreamServerGone(t *testing.T) {
	n := startNotes(t)
	h, _, path := upstreamHub(t, n, "clean")
	goneMidTrial(t, h, n, path)
}

// goneMidTrial has the server n go away between two calls of the trial h records to path:
// the second call's reply names the server as not available, and the record's upstream
// failure names it with no secret in it. It returns that failure.
func goneMidTrial(t *testing.T, h *hub.Hub, n *notesServer, path string) string {
	t.Helper()
	call(t, h, "save_note", `{"title":"a","body":"x"}`)
	n.srv.CloseClientConnections()
	n.srv.Close()
	text, _, isErr := call(t, h, "save_note", `{"title":"b","body":"y"}`)
	if !isErr || !strings.Contains(text, "not available") {
		t.Errorf("reply %q %v, want the server named as not available", text, isErr)
	}
	h.Close("done")
	why := upstream.UpstreamFailure(walltest.ReadRecord(t, path))
	if !strings.Contains(why, `server "notes"`) || strings.Contains(why, "sekrit") {
		t.Errorf("UpstreamFailure = %q, want the server named and no secret", why)
	}
	return why
}

func TestUpstreamRefusesWithReasons(t *testing.T) {
	tests := []struct {
		name   string
		server spec.Server
		want   string
	}{
		{"missing command", spec.Server{Name: "x", Command: "chaos-no-such-server"}, `server "x" (chaos-no-such-server): cannot start "chaos-no-such-server": executable file not found`},
		{"garbage", spec.Server{Name: "g", Command: "sh", Args: []string{"-c", "echo hello there; sleep 5"}}, `server "g" (sh -c echo hello there; sleep 5) did not answer the MCP handshake`},
		{"refused", spec.Server{Name: "r", URL: "http://127.0.0.1:1/mcp?key=${NOTES_TOKEN}"}, `server "r" (http://127.0.0.1:1/mcp) did not answer the MCP handshake`},
		{"unset variable", spec.Server{Name: "v", URL: "http://127.0.0.1:1/mcp", Headers: map[string]string{"X-Key": "${CHAOS_UNSET_VAR}"}}, `server "v": header X-Key: the environment variable CHAOS_UNSET_VAR is not set`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &spec.Spec{Name: "bad", Servers: []spec.Server{tt.server}}
			_, _, err := upstream.Discover(context.Background(), s, upstream.UpstreamConfig{Lookup: lookupToken})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v\nwant it to contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "sekrit") {
				t.Errorf("the error holds the secret: %v", err)
			}
		})
	}
}

// TestUpstreamAnnotationsReachTheAgent: the wall lists a real server's tools with the
// annotations the server gave them (clients act on readOnlyHint and destructiveHint), and
// a simulated tool with none.
func TestUpstreamAnnotationsReachTheAgent(t *testing.T) {
	n := startNotes(t)
	h, _, _ := upstreamHub(t, n, faults.CleanID)
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := mcpwall.NewServer(h, "http").Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*mcp.ToolAnnotations{}
	for _, tool := range list.Tools {
		got[tool.Name] = tool.Annotations
	}
	if a := got["get_note"]; a == nil || !a.ReadOnlyHint {
		t.Errorf("get_note annotations %+v, want readOnlyHint true as the server gave", a)
	}
	if a := got["save_note"]; a == nil || a.ReadOnlyHint || a.DestructiveHint == nil || *a.DestructiveHint {
		t.Errorf("save_note annotations %+v, want destructiveHint false as the server gave", a)
	}
	if len(got) != len(h.Tools()) {
		t.Errorf("listed %d tools, the hub has %d", len(got), len(h.Tools()))
	}
}
