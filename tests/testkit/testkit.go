// Package testkit holds what the end-to-end test packages under tests/ (e2e, run, model,
// upstream, store) need alike to run the chaos binary as a user would: a TestMain that
// builds it once (tests/chaosbin), the environment of the processes a test starts, the
// processes themselves (start, wait for an exit or a line on stdout, signal, stop), a
// finished command's output, `chaos server`, polling, a Temporal client, an MCP client
// over stdio, node for the JavaScript clients and servers, reading a JSON file, and for
// tests of the wall (here and in cmd/) the example spec's clean hub, a port in use and a
// child spoken to over pipes.
// Every helper fails the test it is given, with the process's stdout and stderr where it
// has them; none skips. It is imported by _test.go files only.
package testkit

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/crashwall/chaos/store"
	"github.com/crashwall/chaos/tests/chaosbin"
	"github.com/crashwall/chaos/tests/fixture"
)

// Main is the body of the TestMain of a package that runs chaos: it builds the binary
// once (chaosbin.Build), hands its path to ready, runs the tests and removes the binary.
// It returns the exit code for os.Exit; a failed build prints "name: error" on stderr and
// returns 1.
func Main(m *testing.M, name string, ready func(bin string)) int {
	bin, cleanup, err := chaosbin.Build()
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		return 1
	}
	defer cleanup()
	ready(bin)
	return m.Run()
}

// Env is the environment of the chaos processes a test starts: their sandboxes (TMPDIR)
// and default data directory (XDG_DATA_HOME) in the test's own temporary folder, and no
// results database (store.EnvURL) unless extra names one. extra (KEY=value) comes last, so
// it wins over the test's environment.
func Env(t testing.TB, extra ...string) []string {
	t.Helper()
	env, _ := EnvDir(t, extra...)
	return env
}

// EnvDir is Env and the temporary folder it made for the test, which holds tmp/ (TMPDIR)
// and data/ (XDG_DATA_HOME).
func EnvDir(t testing.TB, extra ...string) (env []string, tmp string) {
	t.Helper()
	tmp = t.TempDir()
	for _, d := range []string{"tmp", "data"} {
		if err := os.MkdirAll(filepath.Join(tmp, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, store.EnvURL+"=") {
			env = append(env, kv)
		}
	}
	env = append(env, "TMPDIR="+filepath.Join(tmp, "tmp"), "XDG_DATA_HOME="+filepath.Join(tmp, "data"))
	return append(env, extra...), tmp
}

// WaitFor polls cond until it holds (fixture.Until); what names the condition in the
// failure, after timeout or shortly before the test's deadline, whichever comes first.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	start := time.Now()
	if !fixture.Until(t, timeout, cond) {
		t.Fatalf("timed out after %s waiting for: %s", time.Since(start).Round(time.Second), what)
	}
}

// JSDir is tests/js, where the JavaScript clients and servers and their node_modules are.
func JSDir() string { return filepath.Join(chaosbin.Root(), "tests", "js") }

// Node is the node binary, once the npm packages pkgs are found installed in tests/js.
// Node and the packages are part of the tests: without them the test fails, never skips.
func Node(t testing.TB, pkgs ...string) string {
	t.Helper()
	for _, pkg := range pkgs {
		if _, err := os.Stat(filepath.Join(JSDir(), "node_modules", pkg, "package.json")); err != nil {
			t.Fatalf("the npm package %s is not installed: run npm ci in tests/js (%v)", pkg, err)
		}
	}
	bin, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not on PATH: install Node.js, then run npm ci in tests/js (%v)", err)
	}
	return bin
}

// WriteFile writes text to path, making its folder first.
func WriteFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ReadJSON decodes the JSON file at path into v.
func ReadJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// DialTemporal connects to the Temporal frontend at addr with the SDK's logging silenced;
// the caller closes the client.
func DialTemporal(t testing.TB, addr string) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{HostPort: addr, Logger: sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	if err != nil {
		t.Fatalf("connect to %s: %v", addr, err)
	}
	return c
}

// RandomSecret is prefix followed by 24 random hex digits: a value no file holds by chance.
func RandomSecret(prefix string) string {
	b := make([]byte, 12)
	rand.Read(b)
	return prefix + hex.EncodeToString(b)
}
