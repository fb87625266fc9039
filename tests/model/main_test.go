package model

import (
	"github.com/crashwall/chaos/tests/chaosbin"

	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	// repoRoot is the module's root, two levels up from this package.
	repoRoot string
	// jsDir is tests/js, where the clients and their node_modules are.
	jsDir string
	// chaosBin is the chaos binary TestMain built for this run.
	chaosBin string
)

// TestMain builds the chaos binary once, into a temporary folder removed afterwards.
func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	repoRoot = chaosbin.Root()
	jsDir = filepath.Join(repoRoot, "tests", "js")
	bin, cleanup, err := chaosbin.Build()
	if err != nil {
		fmt.Fprintln(os.Stderr, "tests/model:", err)
		return 1
	}
	defer cleanup()
	chaosBin = bin
	return m.Run()
}

// node is the node binary, with the npm packages the clients import installed. The
// clients are part of the tests: without them a test fails, never skips.
func node(t testing.TB) string {
	t.Helper()
	for _, pkg := range []string{"openai", "@anthropic-ai/sdk", "@openai/agents"} {
		if _, err := os.Stat(filepath.Join(jsDir, "node_modules", pkg, "package.json")); err != nil {
			t.Fatalf("the npm package %s is not installed: run npm ci in tests/js (%v)", pkg, err)
		}
	}
	bin, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not on PATH: install Node.js, then run npm ci in tests/js (%v)", err)
	}
	return bin
}

// runNode runs a script of tests/js and returns its stdout.
func runNode(t testing.TB, timeout time.Duration, script string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node(t), append([]string{script}, args...)...)
	cmd.Dir = jsDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s %s: %v\n%s", script, strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes()
}

// testEnv is the environment of the chaos processes a test starts: sandboxes and the
// embedded server's data in the test's own folder, and the variables the spec and its
// agent read.
func testEnv(t testing.TB, extra ...string) []string {
	t.Helper()
	tmp := t.TempDir()
	for _, d := range []string{"tmp", "data"} {
		if err := os.MkdirAll(filepath.Join(tmp, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "TMPDIR="+filepath.Join(tmp, "tmp"), "XDG_DATA_HOME="+filepath.Join(tmp, "data"),
		"CHAOS_JS="+jsDir, "OPENAI_AGENTS_DISABLE_TRACING=1")
	return append(env, extra...)
}

// result is a finished chaos command.
type result struct {
	stdout, stderr string
	code           int
}

// runChaos runs the chaos binary to its end.
func runChaos(t testing.TB, env []string, timeout time.Duration, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, chaosBin, args...)
	cmd.Env = env
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("chaos %s did not finish within %s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), timeout, &stdout, &stderr)
	}
	code := 0
	if err != nil {
		code = cmd.ProcessState.ExitCode()
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

func (r result) mustSucceed(t testing.TB, what string) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("%s: exit code %d, want 0\nstdout:\n%s\nstderr:\n%s", what, r.code, r.stdout, r.stderr)
	}
}

// lockedBuffer is a bytes.Buffer a process writes to while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var standinLine = regexp.MustCompile(`(?m)^stand-in model: (http://\S+)$`)

// startStandin runs `chaos model standin --script FILE` and returns its URL; the test's
// cleanup stops it.
func startStandin(t testing.TB, script string) string {
	t.Helper()
	cmd := exec.Command(chaosBin, "model", "standin", "--script", script, "--listen", "127.0.0.1:0")
	out, errOut := &lockedBuffer{}, &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	deadline := time.After(30 * time.Second)
	for {
		if m := standinLine.FindStringSubmatch(out.String()); m != nil && strings.Contains(out.String(), "ready") {
			return m[1]
		}
		select {
		case <-done:
			t.Fatalf("chaos model standin exited before it was ready\nstdout:\n%s\nstderr:\n%s", out, errOut)
		case <-deadline:
			t.Fatalf("chaos model standin was not ready within 30s\nstdout:\n%s\nstderr:\n%s", out, errOut)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// readJSON decodes a JSON file into v.
func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
