package httpwall_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/proxies/httpwall"
	"github.com/crashwall/chaos/proxies/internal/walltest"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
)

// FuzzRESTBody posts any body to /tools/update_ticket, twice, under any of the
// example's conditions. The wall must answer every time with JSON, and with a server
// error only when a fault says so: 503 for a tool failure, 500 for a fault that could
// not apply ("chaos: ..."). Anything else a body can cause is the client's (4xx).
func FuzzRESTBody(f *testing.F) {
	s, err := spec.Load(walltest.ExampleSpec)
	if err != nil {
		f.Fatal(err)
	}
	conds, err := faults.Generate(s)
	if err != nil {
		f.Fatal(err)
	}
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
