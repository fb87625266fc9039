package upstream_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBadServersAtPlanTime: a server that cannot be started, one that answers garbage
// and a URL that refuses connections, over streamable HTTP or over SSE, stop chaos run
// (and chaos faults) before anything runs, with exit 1, a message that names the server
// and the spec and says what went wrong, and no trials.
func TestBadServersAtPlanTime(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := fmt.Sprintf("http://%s/mcp", ln.Addr())
	refusedSSE := fmt.Sprintf("http://%s/sse", ln.Addr())
	ln.Close()
	tests := []struct {
		name   string
		server string
		want   []string
	}{
		{"command that does not exist", "{name: ghost, command: chaos-no-such-mcp-server}",
			[]string{`server "ghost" (chaos-no-such-mcp-server): cannot start "chaos-no-such-mcp-server": executable file not found`}},
		{"server that answers garbage", `{name: noisy, command: sh, args: [-c, "echo this is not JSON-RPC; sleep 3599.5"]}`,
			[]string{`server "noisy" (sh -c echo this is not JSON-RPC; sleep 3599.5) did not answer the MCP handshake`}},
		{"URL that refuses connections", "{name: away, url: " + refused + "}",
			[]string{`server "away" (` + refused + `) did not answer the MCP handshake`, "connection refused"}},
		{"SSE URL that refuses connections", "{name: away, url: \"" + refusedSSE + "\", transport: sse}",
			[]string{`server "away" (` + refusedSSE + ` over SSE) did not answer the MCP handshake`, "connection refused"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, tmp := testEnv(t)
			specPath := writeFile(t, tmp, "bad.yaml", "name: bad\ntask: anything\nagent: {command: \"true\"}\nservers:\n  - "+tt.server+"\n")
			for _, args := range [][]string{{"run", specPath, "--out", filepath.Join(tmp, "run")}, {"faults", specPath}} {
				// The garbage server sleeps an hour: chaos must refuse it on its answer, not
				// wait for it to exit (a hang guard, not a measure of speed).
				res := runChaos(t, env, 15*time.Minute, args...)
				if res.code != 1 {
					t.Errorf("chaos %s: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", args[0], res.code, res.stdout, res.stderr)
				}
				for _, w := range tt.want {
					if !strings.Contains(res.stderr, w) {
						t.Errorf("chaos %s: stderr %q\nwant it to contain %q", args[0], res.stderr, w)
					}
				}
				if !strings.Contains(res.stderr, specPath) {
					t.Errorf("chaos %s: the message does not name the spec: %q", args[0], res.stderr)
				}
			}
			// Refused, the server is ended with everything it started (its shell's sleep).
			if out, err := exec.Command("pgrep", "-f", "sleep 3599.5").Output(); err == nil {
				t.Errorf("a refused server's child is still running: pid %s", strings.TrimSpace(string(out)))
			}
			if _, err := os.Stat(filepath.Join(tmp, "run", "trials")); err == nil {
				t.Error("chaos run ran trials against a server it could not reach")
			}
		})
	}
}

// TestServerExitsDuringTheRun: the first trial whose call reaches the flaky server kills
// it; that trial has no verdict, with the reason, and the run goes on with the others.
func TestServerExitsDuringTheRun(t *testing.T) {
	t.Parallel()
	env, tmp := testEnv(t)
	marker := filepath.Join(tmp, "died")
	script := writeFile(t, tmp, "script.yaml", `writes:
  - name: the note
    tool: save_note
    args: {title: a, body: b}
`)
	specPath := writeFile(t, tmp, "flaky.yaml", fmt.Sprintf(`name: flaky
task: Save a note.
agent:
  command: "{chaos} agent scripted --style blind --transport stdio --wall-command {wall} --script %s"
  profile: scripted
  timeout: 60s
servers:
  - {name: flaky, command: %s, args: [%s, %s]}
claim:
  status_field: "(?im)^\\W*STATUS:\\s*(ok|partial|failed)"
`, script, yamlQuote(node(t)), yamlQuote(filepath.Join(jsDir, "flaky-server.mjs")), yamlQuote(marker)))
	out := filepath.Join(tmp, "run")
	res := runChaos(t, env, 15*time.Minute, "run", specPath, "--out", out, "--only", "clean,phantom_failure@save_note,transient_error@get_note", "--reps", "2")
	if res.code != 0 {
		t.Fatalf("chaos run exited %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	got := allTrials(t, out)
	if len(got) != 6 {
		t.Fatalf("%d trials, want 6 (the run must go on)", len(got))
	}
	died := 0
	for _, r := range got {
		k := r.ID
		if r.Verdict == "no_verdict" {
			died++
			if !strings.Contains(r.VerdictWhy, `server "flaky"`) || !strings.Contains(r.VerdictWhy, "failed during the trial") {
				t.Errorf("%s: no verdict, but the reason does not say the server failed: %q", k, r.VerdictWhy)
			}
		}
	}
	if died != 1 {
		for _, r := range got {
			t.Logf("%s: %s (%s)", r.ID, r.Verdict, r.VerdictWhy)
		}
		t.Errorf("%d trials without a verdict, want exactly the one whose server died", died)
	}
}
