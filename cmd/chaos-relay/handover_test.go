//go:build unix

package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crashwall/chaos/proxies/stdio"
	"github.com/crashwall/chaos/tests/fixture"
)

// TestRelayHandsOverStdio: the relay started as an agent starts {wall} hands its stdin
// and stdout to the hub and lets go of them; the session on them is the same as through
// the relay's copies (answers, record over stdio), and it ends as the agent or the relay
// does, with nothing left open in the hub's process.
func TestRelayHandsOverStdio(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc to look at descriptors in")
	}
	t.Run("calls are answered and recorded; the relay holds its pipes no more", func(t *testing.T) {
		h, st, path := serveHub(t)
		p := startRelay(t, st, nil)
		c := mcp.NewClient(&mcp.Implementation{Name: "relay-test", Version: "0"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin}, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "update_ticket", Arguments: map[string]any{"field": "team", "value": "payments"}})
		if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != `{"status": "updated"}` {
			t.Fatalf("update_ticket through the handed-over pipes: %+v, %v", res, err)
		}
		if n := st.HandedOver(); n != 1 {
			t.Errorf("the hub served %d sessions on handed-over descriptors; want 1", n)
		}
		for _, fd := range []string{"0", "1"} {
			fixture.Eventually(t, "the relay's fd "+fd+" to be /dev/null", func() bool {
				target, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(p.cmd.Process.Pid), "fd", fd))
				return target == os.DevNull
			})
		}
		cs.Close() // closes the relay's stdin
		if code := p.wait(t); code != 0 {
			t.Errorf("exit %d after stdin closed; want 0", code)
		}
		h.Close("test over")
		checkOneCall(t, path)
	})
	t.Run("the agent closing stdin ends the session and the relay", func(t *testing.T) {
		_, st, _ := serveHub(t)
		goroutines := runtime.NumGoroutine()
		p := startRelay(t, st, nil)
		p.exchange(t, initializeLine)
		io.WriteString(p.stdin, initializedLine)
		// A request written just before stdin closes is still answered.
		io.WriteString(p.stdin, updateLine)
		p.stdin.Close()
		if answer, err := p.lines.ReadString('\n'); err != nil || !strings.Contains(answer, "updated") {
			t.Errorf("the last call's answer: %q, %v", answer, err)
		}
		if rest, err := io.ReadAll(p.lines); err != nil || len(rest) != 0 {
			t.Errorf("stdout after the last answer: %q, %v; want its end (the hub closed its copy)", rest, err)
		}
		if code := p.wait(t); code != 0 {
			t.Errorf("exit %d; want 0", code)
		}
		if st.HandedOver() != 1 {
			t.Errorf("HandedOver = %d; want 1", st.HandedOver())
		}
		p.pipeHolders(t, false)
		fixture.Eventually(t, "the session's goroutines to end", func() bool { return runtime.NumGoroutine() <= goroutines })
	})
	t.Run("the relay killed mid-session ends the session", func(t *testing.T) {
		_, st, _ := serveHub(t)
		goroutines := runtime.NumGoroutine()
		p := startRelay(t, st, nil)
		p.exchange(t, initializeLine)
		p.cmd.Process.Kill()
		// The hub's copy of stdout was the last but the test's: its end is the session's.
		if rest, err := io.ReadAll(p.lines); err != nil || len(rest) != 0 {
			t.Errorf("stdout after the relay was killed: %q, %v; want its end", rest, err)
		}
		if code := p.wait(t); code != -1 {
			t.Errorf("exit %d; want the kill's -1", code)
		}
		p.pipeHolders(t, true)
		fixture.Eventually(t, "the session's goroutines to end", func() bool { return runtime.NumGoroutine() <= goroutines })
	})
	t.Run("the hub closing ends the session and the relay while stdin is open", func(t *testing.T) {
		_, st, _ := serveHub(t)
		p := startRelay(t, st, nil)
		defer p.stdin.Close()
		p.exchange(t, initializeLine)
		st.Close()
		if rest, err := io.ReadAll(p.lines); err != nil || len(rest) != 0 {
			t.Errorf("stdout after the hub closed: %q, %v; want its end", rest, err)
		}
		if code := p.wait(t); code != 0 {
			t.Errorf("exit %d after the hub closed; want 0", code)
		}
	})
	t.Run("a stdin the hub refuses (a regular file): the relay copies", func(t *testing.T) {
		_, st, _ := serveHub(t)
		requests := filepath.Join(t.TempDir(), "requests")
		if err := os.WriteFile(requests, []byte(initializeLine+initializedLine+updateLine), 0o600); err != nil {
			t.Fatal(err)
		}
		in, err := os.Open(requests)
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		p := startRelay(t, st, in)
		out, err := io.ReadAll(p.lines)
		if lines := strings.Split(strings.TrimSpace(string(out)), "\n"); err != nil || len(lines) != 2 || !strings.Contains(lines[1], "updated") {
			t.Errorf("stdout: %q, %v; want the answers to initialize and update_ticket", out, err)
		}
		if code := p.wait(t); code != 0 {
			t.Errorf("exit %d; want 0", code)
		}
		if st.HandedOver() != 0 {
			t.Errorf("HandedOver = %d; want 0: a regular file is not served", st.HandedOver())
		}
	})
}

// TestRelayOlderHub: a hub from before the handover reads the handshake as a line that is
// not JSON, answers it with a JSON-RPC error line and serves the bytes: the relay skips
// that line and copies.
func TestRelayOlderHub(t *testing.T) {
	if handshake != stdio.RelayHandshake {
		t.Fatalf("the relay's handshake %q is not proxies/stdio's %q", handshake, stdio.RelayHandshake)
	}
	dir, err := os.MkdirTemp("", "relay-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "hub")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		lines := bufio.NewReader(c) // a plain read: the kernel drops (closes) the descriptors
		if line, err := lines.ReadString('\n'); err != nil || line != handshake {
			return
		}
		io.WriteString(c, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: the message is not valid JSON"}}`+"\n")
		io.Copy(c, lines) // an echo in place of MCP
	}()
	p := startRelay(t, &stdio.StreamServer{Path: sock}, nil)
	io.WriteString(p.stdin, "ping\n")
	if line, err := p.lines.ReadString('\n'); err != nil || line != "ping\n" {
		t.Errorf("the echo through the relay: %q, %v; want ping", line, err)
	}
	p.stdin.Close()
	if code := p.wait(t); code != 0 {
		t.Errorf("exit %d; want 0", code)
	}
}
