package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/proxies/stdio"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/tests/testkit"
)

// serveHub serves the example spec's clean hub on a stream, recording to a file.
func serveHub(t *testing.T) (*hub.Hub, *stdio.StreamServer, string) {
	t.Helper()
	h, path := testkit.ExampleHub(t, "relay")
	st, err := stdio.ServeStream(h, os.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return h, st, path
}

// relay runs the relay on st with pipes for stdin and stdout and returns the MCP SDK's
// client session over them, stdin's writer (to close it), and the exit code once it ends.
func relay(t *testing.T, st *stdio.StreamServer) (*mcp.ClientSession, *io.PipeWriter, <-chan int) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	code := make(chan int, 1)
	go func() {
		c := run([]string{st.Path}, inR, outW, io.Discard)
		outW.Close()
		code <- c
	}()
	c := mcp.NewClient(&mcp.Implementation{Name: "relay-test", Version: "0"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs, inW, code
}

func TestRelay(t *testing.T) {
	t.Run("calls reach the hub and are recorded; stdin's end ends the relay", func(t *testing.T) {
		h, st, path := serveHub(t)
		cs, _, code := relay(t, st)
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "update_ticket", Arguments: map[string]any{"field": "team", "value": "payments"}})
		if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != `{"status": "updated"}` {
			t.Fatalf("update_ticket through the relay: %+v, %v", res, err)
		}
		cs.Close() // closes the relay's stdin
		if c := <-code; c != 0 {
			t.Errorf("exit %d after stdin closed; want 0", c)
		}
		h.Close("test over")
		checkOneCall(t, path)
	})
	t.Run("the hub closing ends the relay while stdin is open", func(t *testing.T) {
		_, st, _ := serveHub(t)
		cs, stdin, code := relay(t, st)
		defer stdin.Close()
		if _, err := cs.ListTools(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		st.Close()
		if c := <-code; c != 0 {
			t.Errorf("exit %d after the hub closed; want 0", c)
		}
	})
}

func TestRelayBadInput(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "hub")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no socket", nil, "usage: chaos-relay SOCKET"},
		{"two arguments", []string{"a", "b"}, "usage: chaos-relay SOCKET"},
		{"a flag", []string{"--help"}, "usage: chaos-relay SOCKET"},
		{"no hub there", []string{missing}, "chaos-relay: cannot reach the trial's hub at " + missing},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if code := run(c.args, strings.NewReader(""), io.Discard, &stderr); code != 1 {
				t.Errorf("exit %d; want 1", code)
			}
			if !strings.HasPrefix(stderr.String(), c.want) || strings.Count(stderr.String(), "\n") != 1 {
				t.Errorf("stderr %q; want one line starting %q", stderr.String(), c.want)
			}
		})
	}
}

// checkOneCall checks the record at path: the one update_ticket call, over stdio, with
// the state after it, and the session's end.
func checkOneCall(t *testing.T, path string) {
	t.Helper()
	l, err := record.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if calls := l.Calls(); len(calls) != 1 || calls[0].Transport != "stdio" || calls[0].State["team"] != "payments" || l.End == nil {
		t.Errorf("record: calls %+v, end %v; want the call over stdio with the state after, and the session end", calls, l.End)
	}
}
