package upstream_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/proxies/internal/walltest"
	"github.com/crashwall/chaos/proxies/upstream"
	"github.com/crashwall/chaos/spec"
)

// sseNotesSpec is notesSpec for the notes server over SSE.
func sseNotesSpec(url string) *spec.Spec {
	s := notesSpec(url)
	s.Servers[0].Transport = spec.TransportSSE
	return s
}

// sseHub opens the notes server over SSE behind a hub with cond armed. The connect
// timeout is short: the session must outlive it.
func sseHub(t *testing.T, n *notesServer, condID string) (*hub.Hub, *upstream.Upstream, string) {
	t.Helper()
	return hubOver(t, upstream.UpstreamConfig{Spec: sseNotesSpec(n.URL), Lookup: lookupToken, ConnectTimeout: 2 * time.Second}, condID)
}

// TestUpstreamOverSSE: a server that speaks only the older HTTP+SSE transport, reached
// natively: its tools are served, a clean call reaches it (also after the connect
// timeout has passed: the event stream is not tied to it), a fabricated one does not,
// the header is expanded on the stream and on every message, and probes call it directly.
func TestUpstreamOverSSE(t *testing.T) {
	t.Run("clean", func(t *testing.T) {
		n := startNotesOver(t, true)
		h, up, path := sseHub(t, n, "clean")
		if len(up.Tools()) != 4 {
			t.Errorf("tools %+v", up.Tools())
		}
		time.Sleep(2500 * time.Millisecond) // past ConnectTimeout
		text, structured, isErr := call(t, h, "save_note", `{"title":"a","body":"x"}`)
		if isErr || text != "Saved note a" || structured != `{"saved":"a"}` {
			t.Errorf("save_note: %q %q %v", text, structured, isErr)
		}
		if b, ok := n.note("a"); !ok || b != "x" {
			t.Errorf("the server holds %q %v, want the note", b, ok)
		}
		res, err := up.CallTool(context.Background(), "notes", "get_note", map[string]any{"title": "a"})
		if err != nil || res.IsError {
			t.Fatalf("direct call: %v %+v", err, res)
		}
		n.mu.Lock()
		auth := append([]string(nil), n.auth...)
		n.mu.Unlock()
		if len(auth) < 3 {
			t.Errorf("the server saw %d requests, want the stream and the messages", len(auth))
		}
		for i, a := range auth {
			if a != "Bearer sekrit-token-42" {
				t.Errorf("request %d had Authorization %q, want the expanded header", i, a)
			}
		}
		h.Close("done")
		if why := upstream.UpstreamFailure(walltest.ReadRecord(t, path)); why != "" {
			t.Errorf("a clean trial recorded a failure: %s", why)
		}
	})
	t.Run("phantom success never reaches the server", func(t *testing.T) {
		n := startNotesOver(t, true)
		h, _, _ := sseHub(t, n, "phantom_success@save_note")
		if _, _, isErr := call(t, h, "save_note", `{"title":"a","body":"x"}`); isErr {
			t.Error("want a fabricated success")
		}
		if n.saves() != 0 {
			t.Errorf("%d saves reached the server", n.saves())
		}
		if _, _, isErr := call(t, h, "save_note", `{"title":"b","body":"y"}`); isErr || n.saves() != 1 {
			t.Errorf("the second save: error %v, %d saves", isErr, n.saves())
		}
	})
	t.Run("server gone during the trial", func(t *testing.T) {
		n := startNotesOver(t, true)
		h, _, path := sseHub(t, n, "clean")
		if why := goneMidTrial(t, h, n, path); !strings.Contains(why, "over SSE") {
			t.Errorf("UpstreamFailure = %q, want the transport named (over SSE)", why)
		}
	})
}

// TestUpstreamSSERefuses: an SSE server that cannot be reached, and a transport that does
// not match what the server speaks, are errors naming the server and saying what to do.
func TestUpstreamSSERefuses(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := ln.Addr().String()
	ln.Close()
	streamable, sse := startNotes(t), startNotesOver(t, true)
	tests := []struct {
		name   string
		server spec.Server
		want   []string
	}{
		{"refused", spec.Server{Name: "r", URL: "http://" + refused + "/sse?key=${NOTES_TOKEN}", Transport: spec.TransportSSE},
			[]string{`server "r" (http://` + refused + `/sse over SSE) did not answer the MCP handshake`, "connection refused"}},
		{"sse at a streamable HTTP server", spec.Server{Name: "s", URL: streamable.URL, Transport: spec.TransportSSE},
			[]string{`server "s" (` + streamable.URL + ` over SSE) did not answer the MCP handshake`, "for a streamable HTTP server leave transport out"}},
		{"streamable HTTP at an SSE server", spec.Server{Name: "h", URL: sse.URL + "/sse"},
			[]string{`server "h" (` + sse.URL + `/sse) did not answer the MCP handshake`, "set transport: sse"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &spec.Spec{Name: "bad", Servers: []spec.Server{tt.server}}
			_, _, err := upstream.Discover(context.Background(), s, upstream.UpstreamConfig{Lookup: lookupToken, ConnectTimeout: 5 * time.Second})
			if err == nil {
				t.Fatal("reached")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v\nwant it to contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "sekrit") {
				t.Errorf("the error holds the secret: %v", err)
			}
		})
	}
}

// TestUpstreamSSEHeadersStayHome: an SSE server that names a message endpoint on another
// host does not get the headers sent there.
func TestUpstreamSSEHeadersStayHome(t *testing.T) {
	var mu sync.Mutex
	var elsewhere []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		elsewhere = append(elsewhere, r.Header.Get("Authorization"))
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	defer other.Close()
	home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: endpoint\ndata: %s/message\n\n", other.URL)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer home.Close()
	s := sseNotesSpec(home.URL + "/sse")
	_, _, err := upstream.Discover(context.Background(), s, upstream.UpstreamConfig{Lookup: lookupToken, ConnectTimeout: time.Second})
	if err == nil {
		t.Fatal("the handshake went through with nobody answering")
	}
	home.CloseClientConnections()
	mu.Lock()
	defer mu.Unlock()
	if len(elsewhere) == 0 {
		t.Fatal("no message reached the other host")
	}
	for _, a := range elsewhere {
		if a != "" {
			t.Errorf("the other host got Authorization %q", a)
		}
	}
}
