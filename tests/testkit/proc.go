package testkit

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Bounds on how long a step may take before the test gives up; none is waited out when
// the step is done sooner.
const (
	StartTimeout = 5 * time.Minute  // a server or worker printing that it is ready (at load 50, minutes)
	StopTimeout  = 30 * time.Second // a process ending on SIGINT before it is killed (then killed)
)

// Buffer is an io.Writer whose readers can wait for it to grow.
type Buffer struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	grew chan struct{}
}

func newBuffer() *Buffer { return &Buffer{grew: make(chan struct{})} }

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	close(b.grew)
	b.grew = make(chan struct{})
	return len(p), nil
}

// Snapshot is what was written so far and a channel closed at the next write.
func (b *Buffer) Snapshot() (string, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String(), b.grew
}

func (b *Buffer) String() string { s, _ := b.Snapshot(); return s }

// Proc is a chaos process a test started.
type Proc struct {
	Name           string // "chaos ARGS...", for failures
	Stdout, Stderr *Buffer
	cmd            *exec.Cmd
	done           chan struct{} // closed when the process has exited
	code           int           // its exit code, -1 when a signal ended it
}

// Start starts the chaos binary bin with args and env (nil: the test's own environment);
// the test's cleanup stops it (SIGINT, then SIGKILL after StopTimeout) if it is still
// running.
func Start(t testing.TB, bin string, env []string, args ...string) *Proc {
	t.Helper()
	return StartIn(t, "", bin, env, args...)
}

// StartIn is Start in the working directory dir ("": the test's own), for commands that
// read or write relative paths, as a user runs them from a folder.
func StartIn(t testing.TB, dir, bin string, env []string, args ...string) *Proc {
	t.Helper()
	p := &Proc{Name: "chaos " + strings.Join(args, " "), Stdout: newBuffer(), Stderr: newBuffer(), done: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = env
	p.cmd.Dir = dir
	p.cmd.Stdout, p.cmd.Stderr = p.Stdout, p.Stderr
	// A grandchild that inherited the pipes must not keep Wait from returning.
	p.cmd.WaitDelay = 5 * time.Second
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", p.Name, err)
	}
	go func() {
		_ = p.cmd.Wait()
		p.code = p.cmd.ProcessState.ExitCode()
		close(p.done)
	}()
	t.Cleanup(func() { p.Stop(t) })
	return p
}

// Stop ends the process if it is still running: SIGINT, and SIGKILL if that does not end
// it within StopTimeout.
func (p *Proc) Stop(t testing.TB) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
		return
	case <-time.After(StopTimeout):
	}
	t.Logf("%s did not stop on SIGINT within %s; killing it", p.Name, StopTimeout)
	_ = p.cmd.Process.Kill()
	<-p.done
}

// Pid is the process's id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Kill ends the process with SIGKILL and waits for it.
func (p *Proc) Kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// Signal sends sig to the process.
func (p *Proc) Signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %s: %v", p.Name, err)
	}
}

// Wait waits for the process to exit and returns its exit code; the test fails if it
// does not exit within timeout.
// Exited says whether the process has ended, and with what exit code.
func (p *Proc) Exited() (int, bool) {
	select {
	case <-p.done:
		return p.code, true
	default:
		return 0, false
	}
}

func (p *Proc) Wait(t testing.TB, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(timeout):
		t.Fatalf("%s did not exit within %s\nstdout:\n%s\nstderr:\n%s", p.Name, timeout, p.Stdout, p.Stderr)
		return 0
	}
}

// WaitStdout waits for the process's stdout to match re and returns the submatches; the
// test fails if the process exits first or does not print it within timeout.
func (p *Proc) WaitStdout(t testing.TB, re *regexp.Regexp, timeout time.Duration) []string {
	t.Helper()
	return p.waitOutput(t, p.Stdout, re, timeout)
}

// WaitStderr is WaitStdout for the process's stderr.
func (p *Proc) WaitStderr(t testing.TB, re *regexp.Regexp, timeout time.Duration) []string {
	t.Helper()
	return p.waitOutput(t, p.Stderr, re, timeout)
}

func (p *Proc) waitOutput(t testing.TB, b *Buffer, re *regexp.Regexp, timeout time.Duration) []string {
	t.Helper()
	deadline := time.After(timeout)
	for {
		out, grew := b.Snapshot()
		if m := re.FindStringSubmatch(out); m != nil {
			return m
		}
		select {
		case <-grew:
		case <-p.done:
			if m := re.FindStringSubmatch(b.String()); m != nil {
				return m
			}
			t.Fatalf("%s exited (code %d) before printing %q\nstdout:\n%s\nstderr:\n%s", p.Name, p.code, re, p.Stdout, p.Stderr)
		case <-deadline:
			t.Fatalf("%s did not print %q within %s\nstdout:\n%s\nstderr:\n%s", p.Name, re, timeout, p.Stdout, p.Stderr)
		}
	}
}

// Result is a finished chaos command.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// Run runs the chaos binary bin with args to its end; the test fails if it does not exit
// within timeout (and the process is stopped as Start's are).
func Run(t testing.TB, bin string, env []string, timeout time.Duration, args ...string) Result {
	t.Helper()
	return RunIn(t, "", bin, env, timeout, args...)
}

// RunIn is Run in the working directory dir ("": the test's own).
func RunIn(t testing.TB, dir, bin string, env []string, timeout time.Duration, args ...string) Result {
	t.Helper()
	p := StartIn(t, dir, bin, env, args...)
	code := p.Wait(t, timeout)
	return Result{Stdout: p.Stdout.String(), Stderr: p.Stderr.String(), Code: code}
}

// MustSucceed fails the test when the command did not exit 0; what names the command.
func (r Result) MustSucceed(t testing.TB, what string) {
	t.Helper()
	if r.Code != 0 {
		t.Fatalf("%s: exit code %d, want 0\nstdout:\n%s\nstderr:\n%s", what, r.Code, r.Stdout, r.Stderr)
	}
}

// Server is a running `chaos server`.
type Server struct {
	*Proc
	Addr string // the frontend's host:port
	UI   string // the web UI's URL, "" without one
}

var (
	serverLine = regexp.MustCompile(`(?m)^Temporal server: (\S+) \(namespace `)
	uiLine     = regexp.MustCompile(`(?m)^Temporal web UI: (\S+)$`)
	readyLine  = regexp.MustCompile(`(?m)^ready; Ctrl-C stops$`)
)

// StartServer starts `chaos server` with its data in dataDir on any free port, its web UI
// on any free port (uiPort 0) or none (-1), and extra arguments, and waits (StartTimeout)
// for it to say it is ready.
func StartServer(t testing.TB, bin string, env []string, dataDir string, uiPort int, extra ...string) *Server {
	t.Helper()
	args := append([]string{"server", "--data-dir", dataDir, "--port", "0", "--ui-port", strconv.Itoa(uiPort)}, extra...)
	p := Start(t, bin, env, args...)
	p.WaitStdout(t, readyLine, StartTimeout)
	out := p.Stdout.String()
	m := serverLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("%s is ready but printed no Temporal server address\nstdout:\n%s\nstderr:\n%s", p.Name, out, p.Stderr)
	}
	s := &Server{Proc: p, Addr: m[1]}
	if m := uiLine.FindStringSubmatch(out); m != nil {
		s.UI = m[1]
	}
	return s
}

// CountProcesses counts the live processes (zombies left out) whose name (/proc/PID/comm)
// is name.
func CountProcesses(name string) int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		comm, err := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		if err != nil || strings.TrimSpace(string(comm)) != name {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			continue
		}
		n++
	}
	return n
}
