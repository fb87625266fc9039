package probes

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// closedPort is an address on which nothing listens.
func closedPort(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestHTTPCheck(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ticket":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"ticket": {"priority": "urgent", "notes": [{"text": "escalated"}], "count": 3, "closed": null, "odd key": true}}`))
		case "/html":
			w.Write([]byte("<html>oops</html>"))
		case "/created":
			w.WriteHeader(http.StatusCreated)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)

	tests := []struct {
		name       string
		url        string
		wantStatus int
		path       string
		want       any
		ok         bool
		detail     string
		noVerdict  string
	}{
		{"status only", "/ticket", 200, "", nil, true, "status 200", ""},
		{"any 2xx", "/created", 0, "", nil, true, "status 201", ""},
		{"wrong status", "/gone", 200, "", nil, false, "status 404, want 200", ""},
		{"wrong status, any 2xx", "/gone", 0, "", nil, false, "status 404, want 2xx", ""},
		{"field", "/ticket", 200, "$.ticket.priority", "urgent", true, `$.ticket.priority = "urgent"`, ""},
		{"field differs", "/ticket", 200, "$.ticket.priority", "normal", false, `$.ticket.priority = "urgent", want "normal"`, ""},
		{"list index", "/ticket", 200, "$.ticket.notes[0].text", "escalated", true, "", ""},
		{"number", "/ticket", 200, "$.ticket.count", 3, true, "", ""},
		{"null", "/ticket", 200, "$.ticket.closed", nil, true, "", ""},
		{"quoted key", "/ticket", 200, `$.ticket["odd key"]`, true, true, "", ""},
		{"missing key", "/ticket", 200, "$.ticket.owner", "dana", false, `has no "owner"`, ""},
		{"index out of range", "/ticket", 200, "$.ticket.notes[3]", "x", false, "has 1 element)", ""},
		{"not JSON", "/html", 200, "$.a", 1, false, "not JSON", ""},
		{"bad path", "/ticket", 200, "ticket.priority", "urgent", false, "", "must start with $"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := HTTPCheck(context.Background(), srv.URL+tt.url, tt.wantStatus, tt.path, tt.want)
			if tt.noVerdict != "" {
				if !strings.Contains(got.NoVerdict, tt.noVerdict) {
					t.Errorf("NoVerdict = %q, want it to say %q", got.NoVerdict, tt.noVerdict)
				}
				return
			}
			if got.NoVerdict != "" {
				t.Fatalf("NoVerdict = %q", got.NoVerdict)
			}
			if got.OK != tt.ok || !strings.Contains(got.Detail, tt.detail) {
				t.Errorf("got %+v, want OK=%v and a detail with %q", got, tt.ok, tt.detail)
			}
		})
	}
}

func TestHTTPCheckConnectionRefused(t *testing.T) {
	got := HTTPCheck(context.Background(), "http://"+closedPort(t)+"/ticket?token=s3cret", 200, "", nil)
	if got.NoVerdict == "" || got.OK {
		t.Fatalf("got %+v, want no verdict", got)
	}
	if !strings.Contains(got.NoVerdict, "refused") {
		t.Errorf("NoVerdict = %q, want it to say the connection was refused", got.NoVerdict)
	}
	if strings.Contains(got.NoVerdict, "s3cret") {
		t.Errorf("NoVerdict %q shows the query string", got.NoVerdict)
	}
}

func TestParseJSONPath(t *testing.T) {
	for _, bad := range []string{"", "a.b", "$.", "$..a", "$[x]", "$[-1]", "$[0", "$a"} {
		if _, err := parseJSONPath(bad); err == nil {
			t.Errorf("parseJSONPath(%q): no error", bad)
		}
	}
	steps, err := parseJSONPath(`$.a['b c'][2].d`)
	if err != nil || len(steps) != 4 || steps[1].key != "b c" || steps[2].index != 2 || steps[3].key != "d" {
		t.Errorf("parseJSONPath = %+v, %v", steps, err)
	}
}
