// Package upstream_test puts real MCP servers from npm behind the wall
// (@modelcontextprotocol/server-memory and server-filesystem over stdio, server-everything
// over streamable HTTP and over HTTP+SSE) and shows that every fault family lands as specified, that probes
// read the world from the real servers, that a fabricated call never reaches them, that
// chaos record writes a spec that runs, that secrets stay out of everything written, and
// that bad servers give clear errors. The servers are part of the tests: with node or the
// npm packages missing (npm ci --prefix tests/js) a test fails, never skips.
package upstream_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/tests/chaosbin"
	"github.com/crashwall/chaos/tests/testkit"
)

var (
	repoRoot = chaosbin.Root()
	jsDir    = testkit.JSDir()
	chaosBin string
)

func TestMain(m *testing.M) {
	os.Exit(testkit.Main(m, "tests/upstream", func(bin string) { chaosBin = bin }))
}

// node is the node binary; the test fails without it.
func node(t testing.TB) string {
	t.Helper()
	return testkit.Node(t)
}

// npmServer is the entry point of an MCP server package installed in tests/js.
func npmServer(t testing.TB, pkg string) string {
	t.Helper()
	p := filepath.Join(jsDir, "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("the npm package @modelcontextprotocol/%s is not installed: run npm ci --prefix tests/js (%v)", pkg, err)
	}
	return p
}

// memoryServer is server-memory over stdio, its graph in the trial's sandbox.
func memoryServer(t testing.TB) spec.Server {
	return spec.Server{Name: "memory", Command: node(t), Args: []string{npmServer(t, "server-memory")},
		Env: map[string]string{"MEMORY_FILE_PATH": "{sandbox}/memory.jsonl"}}
}

// filesystemServer is server-filesystem over stdio, allowed the trial's sandbox.
func filesystemServer(t testing.TB) spec.Server {
	return spec.Server{Name: "fs", Command: node(t), Args: []string{npmServer(t, "server-filesystem"), "{sandbox}"}}
}

// startEverything starts server-everything over streamable HTTP on a free port and
// returns its MCP endpoint; the server is stopped when the test ends.
func startEverything(t testing.TB) string {
	t.Helper()
	return startEverythingAs(t, "streamableHttp", "listening on port", "/mcp")
}

// startEverythingSSE starts server-everything over the older HTTP+SSE transport and
// returns its SSE endpoint.
func startEverythingSSE(t testing.TB) string {
	t.Helper()
	return startEverythingAs(t, "sse", "running on port", "/sse")
}

// startEverythingAs starts server-everything in mode (its first argument) on a free
// loopback port, waits for the line on its stderr that says it listens, and returns the
// endpoint at path; the server is stopped when the test ends.
func startEverythingAs(t testing.TB, mode, listening, path string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(node(t), npmServer(t, "server-everything"), mode)
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		var seen strings.Builder
		for sc.Scan() {
			seen.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), listening) {
				ready <- ""
				io.Copy(io.Discard, stderr)
				return
			}
		}
		ready <- seen.String()
	}()
	select {
	case out := <-ready:
		if out != "" {
			t.Fatalf("server-everything (%s) exited before listening:\n%s", mode, out)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("server-everything (%s) did not listen within 30s", mode)
	}
	return fmt.Sprintf("http://127.0.0.1:%d%s", port, path)
}

// testEnv is the environment of a chaos process and the test's folder that holds its
// data directory and temporary folder (testkit.EnvDir).
func testEnv(t testing.TB, extra ...string) ([]string, string) {
	t.Helper()
	return testkit.EnvDir(t, extra...)
}

// result is how a chaos command ended (testkit.Result, under the names this package's
// tests use).
type result struct {
	code           int
	stdout, stderr string
}

// runChaos runs the chaos binary to its end; the test fails if it does not end within
// timeout.
func runChaos(t testing.TB, env []string, timeout time.Duration, args ...string) result {
	t.Helper()
	r := testkit.Run(t, chaosBin, env, timeout, args...)
	return result{code: r.Code, stdout: r.Stdout, stderr: r.Stderr}
}

// writeFile writes a file in dir and returns its path.
func writeFile(t testing.TB, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// yamlQuote writes s as a YAML double-quoted scalar.
func yamlQuote(s string) string { return strconv.Quote(s) }

// shellQuote makes s one word for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
