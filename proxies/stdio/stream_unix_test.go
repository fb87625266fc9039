//go:build unix

package stdio_test

import (
	"bufio"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/proxies/internal/walltest"
	"github.com/crashwall/chaos/proxies/stdio"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/tests/fixture"
)

const initializeLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}` + "\n"

// TestStreamHandshake: the hub serves a session on the descriptors a relay hands over
// when they are its stdin and stdout (two pipes or sockets, readable and writable as
// such) and answers "y"; anything else it refuses ("n", every descriptor closed) and
// serves the connection's bytes; a first message that is not the handshake is the
// stream's first bytes. No descriptor is left open in the hub's process.
func TestStreamHandshake(t *testing.T) {
	st := walltest.ServeStream(t, walltest.NewHub(t, faults.CleanID, record.Discard()))
	regular, err := os.CreateTemp(t.TempDir(), "regular")
	if err != nil {
		t.Fatal(err)
	}
	regular.Close()

	// agent is the relay's side as the test sets it up: the files it sends and, when the
	// hub takes them, the agent's ends of the pipes (w: its requests, r: the answers).
	type agent struct {
		send []*os.File
		w    *os.File
		r    *os.File
	}
	pipes := func(t *testing.T) agent {
		inR, inW := pipe(t)
		outR, outW := pipe(t)
		return agent{send: []*os.File{inR, outW}, w: inW, r: outR}
	}
	for _, c := range []struct {
		name    string
		payload string
		fds     func(t *testing.T) agent
		answer  byte // 'y', 'n', or 0: no answer, the payload is the stream's start
	}{
		{"two pipes", stdio.RelayHandshake, pipes, 'y'},
		{"two ends of a socket pair", stdio.RelayHandshake, func(t *testing.T) agent {
			in := socketPair(t)
			out := socketPair(t)
			return agent{send: []*os.File{in[1], out[1]}, w: in[0], r: out[0]}
		}, 'y'},
		{"no descriptors (a socket that drops them)", stdio.RelayHandshake, func(*testing.T) agent { return agent{} }, 'n'},
		{"a regular file for stdin", stdio.RelayHandshake, func(t *testing.T) agent {
			a := pipes(t)
			a.send[0].Close()
			a.send[0] = open(t, regular.Name(), os.O_RDONLY)
			return a
		}, 'n'},
		{"a character device (as a terminal is)", stdio.RelayHandshake, func(t *testing.T) agent {
			a := pipes(t)
			a.send[1].Close()
			a.send[1] = open(t, "/dev/zero", os.O_WRONLY)
			return a
		}, 'n'},
		{"stdin a pipe's write end", stdio.RelayHandshake, func(t *testing.T) agent {
			a := pipes(t)
			a.send[0], a.w = a.w, a.send[0]
			return a
		}, 'n'},
		{"three descriptors", stdio.RelayHandshake, func(t *testing.T) agent {
			a := pipes(t)
			r, extra := pipe(t)
			r.Close()
			a.send = append(a.send, extra)
			return a
		}, 'n'},
		{"descriptors without the handshake", initializeLine, pipes, 0},
		{"a client that writes lines straight away", initializeLine, func(*testing.T) agent { return agent{} }, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			handed := st.HandedOver()
			a := c.fds(t)
			var links []string
			for _, f := range append([]*os.File{a.w, a.r}, a.send...) {
				if f != nil {
					links = append(links, fdLink(t, f))
				}
			}
			conn := walltest.DialStream(t, st)
			conn.SetDeadline(time.Now().Add(10 * time.Minute))
			var fds []int
			for _, f := range a.send {
				fds = append(fds, int(f.Fd()))
			}
			var oob []byte
			if len(fds) > 0 {
				oob = syscall.UnixRights(fds...)
			}
			if _, _, err := conn.WriteMsgUnix([]byte(c.payload), oob, nil); err != nil {
				t.Fatal(err)
			}
			for _, f := range a.send {
				f.Close() // as the relay lets go of its own copies
			}
			lines := bufio.NewReader(conn)
			if c.answer != 0 {
				if b, err := lines.ReadByte(); err != nil || b != c.answer {
					t.Fatalf("answer %q, %v; want %q", b, err, c.answer)
				}
			}
			if c.answer == 'y' {
				// The session is on the pipes; the agent closing its end ends it, and the
				// hub closes the connection.
				a.r.SetReadDeadline(time.Now().Add(10 * time.Minute))
				answers := bufio.NewReader(a.r)
				io.WriteString(a.w, initializeLine)
				if line, err := answers.ReadString('\n'); err != nil || !strings.Contains(line, `"result"`) {
					t.Fatalf("initialize on the pipes: %q, %v", line, err)
				}
				a.w.Close()
				if rest, err := io.ReadAll(answers); err != nil || len(rest) != 0 {
					t.Errorf("the agent's answers after its stdin closed: %q, %v; want their end", rest, err)
				}
				if rest, err := io.ReadAll(lines); err != nil || len(rest) != 0 {
					t.Errorf("the relay's connection after the session: %q, %v; want its end", rest, err)
				}
				if got := st.HandedOver() - handed; got != 1 {
					t.Errorf("HandedOver went up by %d; want 1", got)
				}
			} else {
				// The session is on the connection's bytes.
				if c.answer == 'n' {
					io.WriteString(conn, initializeLine)
				}
				if line, err := lines.ReadString('\n'); err != nil || !strings.Contains(line, `"result"`) {
					t.Fatalf("initialize on the connection: %q, %v", line, err)
				}
				conn.CloseWrite()
				if rest, err := io.ReadAll(lines); err != nil || len(rest) != 0 {
					t.Errorf("after the half-close: %q, %v; want the hub to close its side", rest, err)
				}
				if got := st.HandedOver() - handed; got != 0 {
					t.Errorf("HandedOver went up by %d; want 0", got)
				}
			}
			for _, f := range []*os.File{a.w, a.r} {
				if f != nil {
					f.Close()
				}
			}
			conn.Close()
			waitClosed(t, links)
		})
	}
}

// TestStreamRelayGone: a session on handed-over pipes ends when the relay's connection
// does (the relay was killed), though the agent still holds its stdin open.
func TestStreamRelayGone(t *testing.T) {
	st := walltest.ServeStream(t, walltest.NewHub(t, faults.CleanID, record.Discard()))
	inR, inW := pipe(t)
	outR, outW := pipe(t)
	links := []string{fdLink(t, inR), fdLink(t, outR)}
	conn := walltest.DialStream(t, st)
	if _, _, err := conn.WriteMsgUnix([]byte(stdio.RelayHandshake), syscall.UnixRights(int(inR.Fd()), int(outW.Fd())), nil); err != nil {
		t.Fatal(err)
	}
	inR.Close()
	outW.Close()
	conn.SetReadDeadline(time.Now().Add(10 * time.Minute))
	if b, err := bufio.NewReader(conn).ReadByte(); err != nil || b != 'y' {
		t.Fatalf("answer %q, %v; want y", b, err)
	}
	outR.SetReadDeadline(time.Now().Add(10 * time.Minute))
	answers := bufio.NewReader(outR)
	io.WriteString(inW, initializeLine)
	if line, err := answers.ReadString('\n'); err != nil || !strings.Contains(line, `"result"`) {
		t.Fatalf("initialize on the pipes: %q, %v", line, err)
	}
	conn.Close() // the relay is gone
	if rest, err := io.ReadAll(answers); err != nil || len(rest) != 0 {
		t.Errorf("the agent's answers after the relay went: %q, %v; want their end", rest, err)
	}
	if _, err := io.WriteString(inW, initializeLine); err == nil {
		t.Error("the agent could still write to a session that ended; want EPIPE")
	}
	inW.Close()
	outR.Close()
	waitClosed(t, links)
}

func pipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

func socketPair(t *testing.T) [2]*os.File {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		syscall.CloseOnExec(fd)
		syscall.SetNonblock(fd, true)
	}
	p := [2]*os.File{os.NewFile(uintptr(fds[0]), "agent"), os.NewFile(uintptr(fds[1]), "relay")}
	t.Cleanup(func() { p[0].Close(); p[1].Close() })
	return p
}

func open(t *testing.T, name string, flag int) *os.File {
	t.Helper()
	f, err := os.OpenFile(name, flag, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// fdLink is what f is as /proc/self/fd names it: pipe:[INODE], socket:[INODE], a path.
func fdLink(t *testing.T, f *os.File) string {
	t.Helper()
	var link string
	rc, err := f.SyscallConn()
	if err == nil {
		rc.Control(func(fd uintptr) { link, err = os.Readlink("/proc/self/fd/" + strconv.Itoa(int(fd))) })
	}
	if err != nil {
		t.Skipf("no /proc/self/fd to find descriptors in: %v", err)
	}
	return link
}

// waitClosed waits until this process holds none of links: the hub closes those of a
// session as the session ends, on its own goroutine, and those it refuses at once.
func waitClosed(t *testing.T, links []string) {
	t.Helper()
	var open []string
	closed := fixture.Until(t, 0, func() bool {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		open = nil
		for _, e := range ents {
			l, _ := os.Readlink("/proc/self/fd/" + e.Name())
			if slices.Contains(links, l) {
				open = append(open, l)
			}
		}
		return len(open) == 0
	})
	if !closed {
		t.Fatalf("still open in this process after the session: %v", open)
	}
}
