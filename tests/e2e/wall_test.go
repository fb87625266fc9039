package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/tests/testkit"
)

// wallProc is `chaos wall` running as a subprocess, spoken to over its stdin and
// stdout a line at a time.
type wallProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout chan string // lines, closed at EOF
	stderr chan string // lines, closed at EOF

	mu        sync.Mutex
	stderrAll strings.Builder

	exited chan struct{} // closed once the process has been waited for
	state  error         // what Wait returned
}

func startWall(t *testing.T, args ...string) *wallProc {
	t.Helper()
	cmd := exec.Command(chaosBin, append([]string{"wall"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, stdout := testkit.StartPiped(t, cmd)
	w := &wallProc{cmd: cmd, stdin: stdin, stdout: make(chan string, 64), stderr: make(chan string, 64), exited: make(chan struct{})}
	var reads sync.WaitGroup
	reads.Add(2)
	go func() { defer reads.Done(); w.readLines(stdout, w.stdout, false) }()
	go func() { defer reads.Done(); w.readLines(stderr, w.stderr, true) }()
	go func() {
		reads.Wait() // Wait closes the pipes: only once both are read to the end
		w.state = cmd.Wait()
		close(w.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-w.exited:
		default:
			cmd.Process.Kill()
			<-w.exited
		}
		if t.Failed() {
			t.Logf("chaos wall stderr:\n%s", w.stderrText())
		}
	})
	return w
}

func (w *wallProc) readLines(r io.Reader, ch chan string, keep bool) {
	defer close(ch)
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			if keep {
				w.mu.Lock()
				w.stderrAll.WriteString(line)
				w.mu.Unlock()
			}
			select {
			case ch <- line:
			default: // nobody is reading this stream: keep draining it
			}
		}
		if err != nil {
			return
		}
	}
}

func (w *wallProc) stderrText() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stderrAll.String()
}

// send writes one message line.
func (w *wallProc) send(t *testing.T, msg string) {
	t.Helper()
	if _, err := io.WriteString(w.stdin, msg+"\n"); err != nil {
		t.Fatalf("write to chaos wall: %v", err)
	}
}

// request writes one request and waits for the response line with its id.
func (w *wallProc) request(t *testing.T, id int, msg string) map[string]any {
	t.Helper()
	w.send(t, msg)
	timeout := time.After(10 * time.Second)
	for {
		select {
		case line, ok := <-w.stdout:
			if !ok {
				t.Fatalf("chaos wall closed its stdout before answering request %d", id)
			}
			var resp map[string]any
			if err := json.Unmarshal([]byte(line), &resp); err != nil {
				t.Fatalf("chaos wall wrote %q: %v", line, err)
			}
			if resp["id"] == float64(id) {
				if resp["error"] != nil {
					t.Fatalf("request %d: %v", id, resp["error"])
				}
				return resp
			}
		case <-timeout:
			t.Fatalf("no answer to request %d in 10s", id)
		}
	}
}

// wait waits for the process to exit and returns its exit code.
func (w *wallProc) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-w.exited:
	case <-time.After(15 * time.Second):
		t.Fatal("chaos wall did not exit in 15s")
	}
	code := w.cmd.ProcessState.ExitCode()
	if code == -1 {
		t.Fatalf("chaos wall was killed by a signal it should have handled: %v", w.state)
	}
	return code
}

// midSession starts a session and makes one write, so the wall has something to lose.
func midSession(t *testing.T, w *wallProc) {
	t.Helper()
	w.request(t, 1, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"0"}}}`)
	w.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp := w.request(t, 2, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"update_ticket","arguments":{"field":"priority","value":"urgent"}}}`)
	if !strings.Contains(fmt.Sprint(resp["result"]), "updated") {
		t.Fatalf("tools/call: %v", resp)
	}
}

func readRecord(t *testing.T, path string) *record.Log {
	t.Helper()
	l, err := record.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestWallEndings: however a standalone wall is ended mid-session (a signal, or the
// agent closing its stdin) it exits, and its record ends with the session end: the
// final state with the write the agent made, and a reason naming the ending.
func TestWallEndings(t *testing.T) {
	cases := []struct {
		name   string
		signal syscall.Signal // 0: close stdin
		code   int
		reason string
	}{
		{"SIGINT", syscall.SIGINT, 128 + int(syscall.SIGINT), "interrupt"},
		{"SIGTERM", syscall.SIGTERM, 128 + int(syscall.SIGTERM), "terminated"},
		{"SIGHUP", syscall.SIGHUP, 128 + int(syscall.SIGHUP), "hangup"},
		{"stdin closed", 0, 0, "client closed stdin"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := t.TempDir() + "/record.jsonl"
			w := startWall(t, "--spec", exampleSpec, "--condition", "clean", "--record", path)
			midSession(t, w)
			if c.signal != 0 {
				if err := w.cmd.Process.Signal(c.signal); err != nil {
					t.Fatal(err)
				}
			} else {
				w.stdin.Close()
			}
			if code := w.wait(t); code != c.code {
				t.Errorf("exit code %d, want %d", code, c.code)
			}

			l := readRecord(t, path)
			last := l.Rows[len(l.Rows)-1]
			if last.Type != record.TypeSessionEnd {
				t.Fatalf("the record's last row is %s, want session_end", last.Type)
			}
			if !strings.Contains(last.Reason, c.reason) {
				t.Errorf("session end reason %q, want it to name %q", last.Reason, c.reason)
			}
			if last.FinalState["priority"] != "urgent" || last.Calls != 1 {
				t.Errorf("session end %+v, want the final state with priority urgent after 1 call", last)
			}
			if n := len(l.Calls()); n != 1 {
				t.Errorf("%d call rows, want 1", n)
			}
		})
	}
}
