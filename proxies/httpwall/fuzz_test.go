package httpwall_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/crashwall/chaos/proxies/httpwall"
	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/proxies/internal/walltest"
	"github.com/crashwall/chaos/record"
)

// FuzzRESTBody posts any body to /tools/update_ticket, twice, under any of the
// example's conditions. The wall must answer every time with JSON, and with a server
// error only when a fault says so: 503 for a tool failure, 500 for a fault that could
// not apply ("chaos: ..."). Anything else a body can cause is the client's (4xx).
func FuzzRESTBody(f *testing.F) {
	conds := walltest.ExampleConditions(f)
	for i, body := range []string{
		`{"field":"priority","value":"urgent"}`, `{"field":"team","value":"payments","extra":[1,{}]}`,
		``, `null`, `[1]`, `"x"`, `{bad`, `{"field":1,"value":"x"}`, `{"field":"priority"}`,
		`{"field":"\u0000","value":"\ud800"}`, "{\"field\":\"a\",\"value\":\"\xff\"}", `{"field":"a","value":"b"} trailing`,
		strings.Repeat("[", 20000), `{"field":"a","value":"b","field":"c"}`, `1e400`,
	} {
		f.Add(uint8(i), []byte(body))
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		cond := conds[int(which)%len(conds)]
		h := walltest.NewHub(t, cond.ID, record.Discard())
		handler := httpwall.Handler(h)
		for attempt := 1; attempt <= 2; attempt++ {
			w := httptest.NewRecorder()
			req := httptest.NewRequest("POST", "/tools/update_ticket", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			handler.ServeHTTP(w, req)
			got := w.Body.Bytes()
			if ct := w.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("%s, attempt %d: Content-Type %q", cond.ID, attempt, ct)
			}
			if !json.Valid(got) {
				t.Fatalf("%s, attempt %d: status %d with a body that is not JSON: %q", cond.ID, attempt, w.Code, got)
			}
			switch {
			case w.Code == http.StatusOK:
			case w.Code == http.StatusServiceUnavailable, w.Code == http.StatusUnauthorized, w.Code == http.StatusBadRequest:
			case w.Code == http.StatusInternalServerError && bytes.Contains(got, []byte(`"chaos: `)):
			default:
				t.Fatalf("%s, attempt %d: status %d for body %q: %s", cond.ID, attempt, w.Code, body, got)
			}
			if w.Code != http.StatusOK {
				var e struct {
					Error string `json:"error"`
				}
				if err := json.Unmarshal(got, &e); err != nil || e.Error == "" {
					t.Errorf("%s, attempt %d: status %d body %s, want {\"error\": ...}", cond.ID, attempt, w.Code, got)
				}
			}
		}
	})
}

// FuzzFastHTTP posts any body, twice, in an initialized MCP session under any of the
// example's conditions, to the wall whose guard takes plain tool calls past the SDK and to
// the SDK's handler alone: both must answer the same (status, headers, bytes), count the
// same calls, faults and contacts, and record the same rows.
func FuzzFastHTTP(f *testing.F) {
	conds := walltest.ExampleConditions(f)
	for i, st := range mcpScript {
		if st.method == "" && st.session == "" && !st.tooLarge {
			f.Add(uint8(i), []byte(st.body))
		}
	}
	f.Add(uint8(0), []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"update_ticket","arguments":{"field":"priority","value":"urgent"}},"extra":1}`))
	f.Add(uint8(1), []byte(`{"id":7,"jsonrpc":"2.0","params":{"arguments":{"value":"x","field":"team"},"name":"update_ticket"},"method":"tools/call"}`))
	f.Add(uint8(2), []byte(`{"jsonrpc":"2.0","id":-0,"method":"tools/call","params":{"name":"read_email","arguments":{}}}`))
	f.Add(uint8(3), []byte(`{"jsonrpc":"2.0","id":"","method":"tools/call","params":{"name":"read_email","arguments":[]}}`))
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		cond := conds[int(which)%len(conds)]
		var answers [2]string
		var stats [2]hub.Stats
		var rows [2][]string
		for i, fast := range []bool{true, false} {
			h, path := walltest.NewTrial(t, cond.ID)
			handler := httpwall.Handler(h)
			if !fast {
				handler = httpwall.HandlerSDKOnly(h)
			}
			session := ""
			post := func(body []byte) *httptest.ResponseRecorder {
				req := httptest.NewRequest("POST", "/mcp", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				if session != "" {
					req.Header.Set("Mcp-Session-Id", session)
					req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
				}
				w := httptest.NewRecorder()
				handler.ServeHTTP(w, req)
				return w
			}
			init := post([]byte(initializeBody("0")))
			if session = init.Header().Get("Mcp-Session-Id"); init.Code != http.StatusOK || session == "" {
				t.Fatalf("initialize: %d %s", init.Code, init.Body)
			}
			if w := post([]byte(initializedBody)); w.Code != http.StatusAccepted {
				t.Fatalf("notifications/initialized: %d %s", w.Code, w.Body)
			}
			var b strings.Builder
			for range 2 {
				w := post(body)
				fmt.Fprintf(&b, "%d %q %q %q\n%s\n", w.Code, w.Header().Get("Content-Type"), w.Header().Get("Cache-Control"),
					strings.ReplaceAll(w.Header().Get("Mcp-Session-Id"), session, "<session>"), w.Body)
			}
			// The SDK handles a notification after it has answered its POST, but before
			// the next message of the session: the answer to a ping says it is counted.
			if w := post([]byte(`{"jsonrpc":"2.0","id":"sync","method":"ping"}`)); w.Code != http.StatusOK {
				t.Fatalf("ping: %d %s", w.Code, w.Body)
			}
			answers[i], stats[i] = b.String(), h.Stats()
			h.Close("test over")
			rows[i] = walltest.RecordRows(t, path)
		}
		if answers[0] != answers[1] {
			t.Fatalf("%s, body %q:\n the guard answers\n%s the SDK\n%s", cond.ID, body, answers[0], answers[1])
		}
		if stats[0] != stats[1] {
			t.Errorf("%s, body %q: the guard leaves the counts %+v, the SDK %+v", cond.ID, body, stats[0], stats[1])
		}
		if !slices.Equal(rows[0], rows[1]) {
			t.Errorf("%s, body %q: the guard records\n%s\nthe SDK\n%s", cond.ID, body, strings.Join(rows[0], "\n"), strings.Join(rows[1], "\n"))
		}
	})
}
