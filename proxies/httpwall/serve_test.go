package httpwall_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/proxies/httpwall"
	"github.com/crashwall/chaos/proxies/internal/walltest"
)

// TestServeWithExtra: handlers given in ServeConfig.Extra are served beside the hub's own
// (as the model proxy is at /llm/); a pattern the hub serves already is refused.
func TestServeWithExtra(t *testing.T) {
	h, _ := walltest.NewTrial(t, faults.CleanID)
	extra := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "extra "+r.URL.Path) })
	srv, err := httpwall.ServeWith(h, httpwall.ServeConfig{Extra: map[string]http.Handler{
		httpwall.ModelPrefix + "/": http.StripPrefix(httpwall.ModelPrefix, extra),
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	get := func(path string) string {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return strings.TrimSpace(string(b))
	}
	if got := get("/llm/v1/models?x=1"); got != "extra /v1/models" {
		t.Errorf("GET /llm/v1/models: %q", got)
	}
	if got := get("/healthz"); got != "ok" {
		t.Errorf("GET /healthz: %q", got)
	}

	for _, pattern := range []string{"/mcp", "/healthz"} {
		if _, err := httpwall.ServeWith(h, httpwall.ServeConfig{Extra: map[string]http.Handler{pattern: extra}}); err == nil || !strings.Contains(err.Error(), pattern) {
			t.Errorf("Extra %s: %v, want an error naming the pattern", pattern, err)
		}
	}
	if _, err := httpwall.ServeWith(h, httpwall.ServeConfig{Extra: map[string]http.Handler{"/x/": nil}}); err == nil {
		t.Error("a nil handler was accepted")
	}
}
