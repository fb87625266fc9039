package model

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/tests/chaosbin"
	"github.com/crashwall/chaos/tests/testkit"
)

var (
	// repoRoot is the module's root, two levels up from this package.
	repoRoot = chaosbin.Root()
	// jsDir is tests/js, where the clients and their node_modules are.
	jsDir = testkit.JSDir()
	// chaosBin is the chaos binary TestMain built for this run.
	chaosBin string
)

// TestMain builds the chaos binary once, into a temporary folder removed afterwards.
func TestMain(m *testing.M) {
	os.Exit(testkit.Main(m, "tests/model", func(bin string) { chaosBin = bin }))
}

// node is the node binary, with the npm packages the clients import installed. The
// clients are part of the tests: without them a test fails, never skips.
func node(t testing.TB) string {
	t.Helper()
	return testkit.Node(t, "openai", "@anthropic-ai/sdk", "@openai/agents")
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
	return testkit.Env(t, append([]string{"CHAOS_JS=" + jsDir, "OPENAI_AGENTS_DISABLE_TRACING=1"}, extra...)...)
}

// runChaos runs the chaos binary to its end.
func runChaos(t testing.TB, env []string, timeout time.Duration, args ...string) testkit.Result {
	t.Helper()
	return testkit.Run(t, chaosBin, env, timeout, args...)
}

var standinLine = regexp.MustCompile(`(?ms)^stand-in model: (http://\S+)$.*^ready; Ctrl-C stops$`)

// startStandin runs `chaos model standin --script FILE` and returns its URL once it is
// ready; the test's cleanup stops it.
func startStandin(t testing.TB, script string) string {
	t.Helper()
	p := testkit.Start(t, chaosBin, nil, "model", "standin", "--script", script, "--listen", "127.0.0.1:0")
	return p.WaitStdout(t, standinLine, 30*time.Second)[1]
}
