//go:build unix

package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crashwall/chaos/proxies/stdio"
	"github.com/crashwall/chaos/tests/fixture"
)

const (
	initializeLine  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}` + "\n"
	initializedLine = `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
	updateLine      = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"update_ticket","arguments":{"field":"team","value":"payments"}}}` + "\n"
)

// relayProc is the relay as an agent starts it: a process of its own (this test binary
// as `chaos-relay SOCKET`, TestMain) with pipes for its stdin and stdout.
type relayProc struct {
	cmd    *exec.Cmd
	stdin  *os.File // the agent's end of the relay's stdin; nil when stdin is a file
	stdout *os.File // the agent's end of the relay's stdout
	lines  *bufio.Reader
	waited error
	pipes  [2]string // stdin's and stdout's pipes as /proc names them
}

func startRelay(t *testing.T, st *stdio.StreamServer, stdin *os.File) *relayProc {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := &relayProc{cmd: exec.Command(self)}
	p.cmd.Env = append(os.Environ(), "RELAY_TEST_MAIN="+st.Path)
	p.cmd.Stderr = os.Stderr
	var theirs []*os.File
	if stdin == nil {
		r, w := osPipe(t)
		stdin, p.stdin = r, w
		theirs = append(theirs, r)
	}
	r, w := osPipe(t)
	p.stdout = r
	theirs = append(theirs, w)
	p.pipes = [2]string{pipeName(t, stdin), pipeName(t, r)}
	p.stdout.SetReadDeadline(time.Now().Add(10 * time.Minute))
	p.lines = bufio.NewReader(p.stdout)
	p.cmd.Stdin, p.cmd.Stdout = stdin, w
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for _, f := range theirs {
		f.Close() // the relay's ends are the relay's now
	}
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
	})
	return p
}

func osPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

// pipeHolders waits until this process holds the relay's stdin and stdout pipes only by
// the agent's own ends (stdinOpen: the agent has not closed its end of stdin): the hub's
// copies are closed.
func (p *relayProc) pipeHolders(t *testing.T, stdinOpen bool) {
	t.Helper()
	want := map[string]int{p.pipes[0]: 0, p.pipes[1]: 1}
	if stdinOpen {
		want[p.pipes[0]] = 1
	}
	for link, n := range want {
		fixture.Eventually(t, "the hub to close its copy of "+link, func() bool {
			ents, err := os.ReadDir("/proc/self/fd")
			if err != nil {
				t.Fatal(err)
			}
			got := 0
			for _, e := range ents {
				if l, _ := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); l == link {
					got++
				}
			}
			return got == n
		})
	}
}

// pipeName is f's pipe as /proc names it.
func pipeName(t *testing.T, f *os.File) string {
	t.Helper()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("pipe:[%d]", fi.Sys().(*syscall.Stat_t).Ino)
}

// exchange writes a request and returns the line that answers it.
func (p *relayProc) exchange(t *testing.T, line string) string {
	t.Helper()
	if _, err := io.WriteString(p.stdin, line); err != nil {
		t.Fatal(err)
	}
	answer, err := p.lines.ReadString('\n')
	if err != nil || !strings.Contains(answer, `"result"`) {
		t.Fatalf("the answer to %s: %q, %v", strings.TrimSpace(line), answer, err)
	}
	return answer
}

// wait waits for the relay's end and returns its exit code (-1: a signal ended it).
func (p *relayProc) wait(t *testing.T) int {
	t.Helper()
	done := make(chan struct{})
	go func() { p.waited = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Minute):
		t.Fatal("the relay did not end")
	}
	if p.cmd.ProcessState == nil {
		t.Fatalf("waiting for the relay: %v", p.waited)
	}
	return p.cmd.ProcessState.ExitCode()
}
