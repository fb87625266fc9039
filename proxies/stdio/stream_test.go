package stdio_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/proxies/internal/walltest"
	"github.com/crashwall/chaos/proxies/stdio"
	"github.com/crashwall/chaos/record"
)

// TestServeStream: the socket is reachable by its owner only; a session is the stdio
// wall's, bad lines answered and recorded; the agent closing its end ends the session, and
// Close ends the open ones and removes the socket's folder.
func TestServeStream(t *testing.T) {
	h, path := walltest.NewTrial(t, faults.CleanID)
	st := walltest.ServeStream(t, h)

	dir := filepath.Dir(st.Path)
	for _, c := range []struct {
		path string
		want os.FileMode
	}{{dir, 0o700}, {st.Path, 0o600}} {
		fi, err := os.Stat(c.path)
		if err != nil || fi.Mode().Perm() != c.want {
			t.Errorf("%s: mode %v, %v; want %v", c.path, fi.Mode().Perm(), err, c.want)
		}
	}

	// A raw session, as the relay passes it on: line in, line out.
	conn := walltest.DialStream(t, st)
	lines := bufio.NewReader(conn)
	exchange := func(msg string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(conn, msg+"\n"); err != nil {
			t.Fatal(err)
		}
		line, err := lines.ReadBytes('\n')
		if err != nil {
			t.Fatalf("after %s: %v", msg, err)
		}
		var resp map[string]any
		if err := json.Unmarshal(line, &resp); err != nil {
			t.Fatalf("the hub wrote %q: %v", line, err)
		}
		return resp
	}
	if resp := exchange(`{not json`); resp["error"].(map[string]any)["code"] != float64(-32700) {
		t.Errorf("a line that is not JSON: %v; want a -32700 error", resp)
	}
	if resp := exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`); resp["result"] == nil {
		t.Fatalf("initialize: %v", resp)
	}
	io.WriteString(conn, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	resp := exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"update_ticket","arguments":{"field":"priority","value":"urgent"}}}`)
	if !strings.Contains(toJSON(resp["result"]), "updated") {
		t.Errorf("update_ticket: %v", resp)
	}
	// The agent closes its end (the relay half-closes on stdin's EOF): the hub ends the
	// session and closes the socket, which ends the relay.
	conn.CloseWrite()
	if rest, err := io.ReadAll(lines); err != nil || len(rest) != 0 {
		t.Errorf("after the half-close: %q, %v; want the hub to close its side", rest, err)
	}

	// An open session ends when the stream is closed, and the folder goes.
	other := walltest.DialStream(t, st)
	cs := walltest.Connect(t, &mcp.IOTransport{Reader: other, Writer: other})
	if text, isErr := walltest.CallText(t, cs, "get_ticket_field", map[string]any{"field": "priority"}); isErr || !strings.Contains(text, "urgent") {
		t.Errorf("get_ticket_field on a second session = %q (error %v)", text, isErr)
	}
	if err := st.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	cs.Wait() // returns once the hub has closed the session's socket
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket's folder after Close: %v; want it removed", err)
	}
	h.Close("test over")

	l := walltest.ReadRecord(t, path)
	calls := l.Calls()
	if len(calls) != 2 || calls[0].Transport != "stdio" || calls[0].State["priority"] != "urgent" || calls[1].Tool != "get_ticket_field" {
		t.Errorf("calls = %+v; want update_ticket then get_ticket_field over stdio, with the state after", calls)
	}
	var rejected []record.Row
	for _, r := range l.Rows {
		if r.Type == record.TypeError {
			rejected = append(rejected, r)
		}
	}
	if len(rejected) != 1 || rejected[0].Transport != "stdio" {
		t.Errorf("error rows = %+v; want the line that was not JSON, over stdio", rejected)
	}
}

func TestServeStreamPathTooLong(t *testing.T) {
	h := walltest.NewHub(t, faults.CleanID, record.Discard())
	deep := filepath.Join(t.TempDir(), strings.Repeat("d", 100))
	if _, err := stdio.ServeStream(h, deep); !errors.Is(err, stdio.ErrSocketPathTooLong) {
		t.Errorf("ServeStream under %s: %v; want ErrSocketPathTooLong", deep, err)
	}
}

func toJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestOpenStdioWall: {wall} is the relay when one sits next to the chaos binary (on a
// socket under the folder given, or the temporary folder when that is too deep), else
// chaos wall --hub URL.
func TestOpenStdioWall(t *testing.T) {
	srv := walltest.ServeHTTP(t, walltest.NewHub(t, faults.CleanID, record.Discard()))
	withRelay, alone := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(withRelay, stdio.RelayName), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	short := t.TempDir()
	if len(short) > 60 {
		short = os.TempDir()
	}
	for _, c := range []struct {
		name, binDir, dir string
		relay             bool
		under             string
	}{
		{"no relay", alone, short, false, ""},
		{"relay", withRelay, short, true, short},
		{"relay, deep folder", withRelay, filepath.Join(short, strings.Repeat("d", 100)), true, os.TempDir()},
	} {
		t.Run(c.name, func(t *testing.T) {
			bin := filepath.Join(c.binDir, "chaos")
			w, err := stdio.OpenStdioWall(srv, bin, c.dir)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { w.Close() })
			if !c.relay {
				if w.Stream != nil || w.Command != stdio.WallCommand(bin, srv.URL) || w.MCPConfig != stdio.WallMCPConfig(bin, srv.URL) {
					t.Errorf("got %+v; want chaos wall --hub %s", w, srv.URL)
				}
				return
			}
			if w.Stream == nil || filepath.Dir(filepath.Dir(w.Stream.Path)) != c.under {
				t.Fatalf("got %+v; want a stream under %s", w, c.under)
			}
			relay := filepath.Join(c.binDir, stdio.RelayName)
			if w.Command != stdio.RelayCommand(relay, w.Stream.Path) || w.MCPConfig != stdio.RelayMCPConfig(relay, w.Stream.Path) {
				t.Errorf("got %+v; want the relay %s on %s", w, relay, w.Stream.Path)
			}
		})
	}
}
