package httpwall_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/proxies/httpwall"
	"github.com/crashwall/chaos/proxies/internal/walltest"
	"github.com/crashwall/chaos/proxies/mcpwall"
)

// TestServeUnix serves a hub on its TCP port and on a unix socket: a REST call through
// the socket, with the Host a container's relay sends (its own loopback), is answered and
// recorded like one through the port, and so is an MCP call (answered by the guard); the
// socket is 0600; Close removes it.
func TestServeUnix(t *testing.T) {
	h, path := walltest.NewTrial(t, faults.CleanID)
	srv, err := httpwall.Serve(h, "")
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "unix-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "http")
	if err := srv.ServeUnix(sock, 0o600); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm() != 0o600 || fi.Mode().Type() != fs.ModeSocket {
		t.Errorf("the socket: %v %v, want a socket with mode 0600", fi, err)
	}
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	resp, err := c.Post("http://127.0.0.1:7070/tools/read_email", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "T-4821") {
		t.Errorf("REST through the socket: %d %s", resp.StatusCode, body)
	}
	// MCP through the socket: a plain tool call is the guard's, as on the port.
	mcpClient := walltest.NewRawMCP(t, "http://127.0.0.1:7070/mcp", c)
	before := mcpwall.FastAnswered()
	// (The first may go to the SDK, behind notifications/initialized: TestFastHTTPCallsWaitForANotification.)
	for _, id := range []string{"1", "2"} {
		if a := mcpClient.Call(t, callBody(id, "update_ticket", urgent)); !strings.Contains(string(a), `"result"`) {
			t.Errorf("MCP through the socket: %s", a)
		}
	}
	if n := mcpwall.FastAnswered() - before; n < 1 {
		t.Errorf("the guard answered %d of 2 MCP calls through the socket, want the second at least", n)
	}
	// A page that rebinds a name still gets nothing: protect checks the Host on every route.
	resp, err = c.Get("http://evil.example/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("Host evil.example through the socket: %d, want 403", resp.StatusCode)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sock); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the socket is still there after Close: %v", err)
	}
	h.Close("test over")
	rec, _ := os.ReadFile(path)
	if !strings.Contains(string(rec), `"read_email"`) {
		t.Errorf("the call through the socket is not in the record:\n%s", rec)
	}
}
