// Package store_test checks chaos against a real PostgreSQL server, end to end through the
// binary: the embedded Temporal server on Postgres across a restart, the results database
// (runs, show, trend, a database that goes away mid-run, bad URLs, a newer schema), and
// schedules on the embedded server that find a planted regression and post it to a
// webhook. Each test starts its own throwaway cluster (store/pgtest).
package store_test

import (
	"github.com/crashwall/chaos/tests/chaosbin"

	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/crashwall/chaos/store"
)

var (
	chaosBin    string // built once by TestMain
	exampleSpec string // examples/support-ticket.yaml, absolute
)

func TestMain(m *testing.M) {
	bin, cleanup, err := chaosbin.Build()
	if err != nil {
		fmt.Fprintln(os.Stderr, "tests/store:", err)
		os.Exit(1)
	}
	chaosBin = bin
	exampleSpec = filepath.Join(chaosbin.Root(), "examples", "support-ticket.yaml")
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// Bounds on a step; none is waited out when the step is done sooner.
const (
	startTimeout = time.Minute
	runTimeout   = 3 * time.Minute
	stopTimeout  = 30 * time.Second
)

// testEnv is the environment of the processes a test starts: their own data directory
// and temporary folder, and no results database unless the test names one.
func testEnv(t testing.TB) []string {
	t.Helper()
	tmp := t.TempDir()
	for _, d := range []string{"tmp", "data"} {
		if err := os.MkdirAll(filepath.Join(tmp, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, store.EnvURL+"=") {
			env = append(env, kv)
		}
	}
	return append(env, "TMPDIR="+filepath.Join(tmp, "tmp"), "XDG_DATA_HOME="+filepath.Join(tmp, "data"))
}

// result is how a chaos command ended.
type result struct {
	stdout, stderr string
	code           int
}

// chaos runs the binary to its end.
func chaos(t testing.TB, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, chaosBin, args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("chaos %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, r.stdout, r.stderr)
	}
	return r
}

// mustChaos runs the binary and fails the test unless it exits 0.
func mustChaos(t testing.TB, env []string, args ...string) result {
	t.Helper()
	r := chaos(t, env, args...)
	if r.code != 0 {
		t.Fatalf("chaos %s exited %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

// oneClearLine checks a refusal: exit 1, one line on stderr that says want, no stack
// trace, no password.
func oneClearLine(t testing.TB, r result, want string, secrets ...string) {
	t.Helper()
	if r.code != 1 {
		t.Errorf("exit code %d, want 1\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	msg := strings.TrimRight(r.stderr, "\n")
	if strings.Count(msg, "\n") != 0 || !strings.HasPrefix(msg, "chaos: ") || !strings.Contains(msg, want) {
		t.Errorf("stderr %q: want one line starting \"chaos: \" with %q", r.stderr, want)
	}
	for _, bad := range append([]string{"goroutine ", "panic:", ".go:"}, secrets...) {
		if strings.Contains(r.stderr+r.stdout, bad) {
			t.Errorf("output shows %q:\n%s%s", bad, r.stdout, r.stderr)
		}
	}
}

// syncBuffer is an io.Writer whose readers can wait for it to grow.
type syncBuffer struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	grew chan struct{}
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{grew: make(chan struct{})} }

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	close(b.grew)
	b.grew = make(chan struct{})
	return len(p), nil
}

func (b *syncBuffer) snapshot() (string, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String(), b.grew
}

func (b *syncBuffer) String() string { s, _ := b.snapshot(); return s }

// proc is a chaos process running in the background.
type proc struct {
	name           string
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	done           chan struct{}
	code           int
}

// start starts the binary; the test's cleanup stops it (SIGINT, then SIGKILL).
func start(t testing.TB, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{name: "chaos " + strings.Join(args, " "), stdout: newSyncBuffer(), stderr: newSyncBuffer(), done: make(chan struct{})}
	p.cmd = exec.Command(chaosBin, args...)
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	p.cmd.WaitDelay = 5 * time.Second
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", p.name, err)
	}
	go func() {
		_ = p.cmd.Wait()
		p.code = p.cmd.ProcessState.ExitCode()
		close(p.done)
	}()
	t.Cleanup(func() { p.stop(t) })
	return p
}

func (p *proc) stop(t testing.TB) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(stopTimeout):
		t.Logf("%s did not stop on SIGINT within %s; killing it", p.name, stopTimeout)
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *proc) wait(t testing.TB, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(timeout):
		t.Fatalf("%s did not exit within %s\nstdout:\n%s\nstderr:\n%s", p.name, timeout, p.stdout, p.stderr)
		return 0
	}
}

// waitStdout waits for stdout to match re.
func (p *proc) waitStdout(t testing.TB, re *regexp.Regexp, timeout time.Duration) []string {
	t.Helper()
	deadline := time.After(timeout)
	for {
		out, grew := p.stdout.snapshot()
		if m := re.FindStringSubmatch(out); m != nil {
			return m
		}
		select {
		case <-grew:
		case <-p.done:
			if m := re.FindStringSubmatch(p.stdout.String()); m != nil {
				return m
			}
			t.Fatalf("%s exited (code %d) before printing %q\nstdout:\n%s\nstderr:\n%s", p.name, p.code, re, p.stdout, p.stderr)
		case <-deadline:
			t.Fatalf("%s did not print %q within %s\nstdout:\n%s\nstderr:\n%s", p.name, re, timeout, p.stdout, p.stderr)
		}
	}
}

// startServer starts chaos server with args added and returns it once it is ready.
func startServer(t testing.TB, env []string, dataDir string, args ...string) *proc {
	t.Helper()
	p := start(t, env, append([]string{"server", "--data-dir", dataDir, "--port", "0", "--ui-port", "-1"}, args...)...)
	p.waitStdout(t, regexp.MustCompile(`ready; Ctrl-C stops`), startTimeout)
	return p
}

// eventually polls cond until it holds or the timeout passes.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// query runs one query on the database and scans its single row.
func query(t testing.TB, url, q string, dest ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, q).Scan(dest...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// specWith writes the support-ticket example with its text changed by the replacements
// (old, new pairs; each old must be there) into dir and returns its path.
func specWith(t testing.TB, dir string, replacements ...string) string {
	t.Helper()
	b, err := os.ReadFile(exampleSpec)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for i := 0; i+1 < len(replacements); i += 2 {
		if !strings.Contains(s, replacements[i]) {
			t.Fatalf("the example spec has no %q", replacements[i])
		}
		s = strings.Replace(s, replacements[i], replacements[i+1], 1)
	}
	path := filepath.Join(dir, "support-ticket.yaml")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
