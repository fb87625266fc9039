package upstream_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
)

// server-everything speaks only the older HTTP+SSE transport when started with "sse":
// GET /sse opens the event stream, whose first event names /message?sessionId=... for
// the client's messages. These tests put it behind the wall as `transport: sse`, which
// the wall reaches natively (the Go SDK's SSE client), with no bridge.

func everythingSSESpec(url string) *spec.Spec {
	return &spec.Spec{Name: "everything", Tasks: []spec.Task{{ID: "t", Prompt: "toggle logging"}},
		Servers: []spec.Server{{Name: "everything", URL: url, Transport: spec.TransportSSE}}}
}

// TestEverythingOverSSEFaults is TestEverythingOverHTTPFaults with server-everything
// speaking SSE: the clean condition reaches the server and comes back whole, the
// fabricating families never reach it, the damaging ones damage the real reply.
func TestEverythingOverSSEFaults(t *testing.T) {
	url := startEverythingSSE(t)
	weather := map[string]any{"temperature": 33.0, "conditions": "Cloudy", "humidity": 82.0}
	tests := []struct {
		cond string
		play func(t *testing.T, r *rig)
	}{
		{"clean", func(t *testing.T, r *rig) {
			if got := r.call("echo", map[string]any{"message": "hi"}); got.isErr || got.text != "Echo: hi" {
				t.Errorf("echo: %+v", got)
			}
			if got := r.call("get-structured-content", map[string]any{"location": "New York"}); !jsonEqual(got.structured, weather) {
				t.Errorf("structured: %+v", got)
			}
			r.call("toggle-simulated-logging", map[string]any{})
			if !loggingOn(r) {
				t.Error("the toggle did not reach the server")
			}
		}},
		{"phantom_success@toggle-simulated-logging", func(t *testing.T, r *rig) {
			if got := r.call("toggle-simulated-logging", map[string]any{}); got.isErr {
				t.Errorf("reply %+v, want a success", got)
			}
			if loggingOn(r) {
				t.Error("the fabricated toggle reached the server")
			}
			rows := r.calls()
			if h := rows[0].Hit; h == nil || !h.Fired || h.Performed || h.Family != "phantom_success" {
				t.Errorf("record: %+v", rows[0].Hit)
			}
		}},
		{"phantom_failure@toggle-simulated-logging", func(t *testing.T, r *rig) {
			if got := r.call("toggle-simulated-logging", map[string]any{}); !got.isErr {
				t.Errorf("reply %+v, want a failure", got)
			}
			if !loggingOn(r) {
				t.Error("the toggle was not performed")
			}
		}},
		{"transient_error@echo", func(t *testing.T, r *rig) {
			if got := r.call("echo", map[string]any{"message": "hi"}); !got.isErr {
				t.Errorf("reply %+v, want a 503", got)
			}
			if got := r.call("echo", map[string]any{"message": "hi"}); got.isErr || got.text != "Echo: hi" {
				t.Errorf("retry %+v", got)
			}
		}},
		{"session_drop@toggle-simulated-logging", func(t *testing.T, r *rig) {
			r.call("toggle-simulated-logging", map[string]any{})
			if got := r.call("toggle-simulated-logging", map[string]any{}); !got.isErr || !strings.Contains(got.text, "401") {
				t.Errorf("second toggle %+v, want a 401", got)
			}
			if !loggingOn(r) {
				t.Error("the first toggle did not reach the server, or the dropped one did")
			}
		}},
		{"truncated_reply@get-structured-content", func(t *testing.T, r *rig) {
			got := r.call("get-structured-content", map[string]any{"location": "New York"})
			if got.isErr || json.Valid([]byte(got.text)) || got.structured != nil {
				t.Errorf("reply %+v, want the text cut and no structured content", got)
			}
		}},
		{"premature_read@get-structured-content", func(t *testing.T, r *rig) {
			got := r.call("get-structured-content", map[string]any{"location": "New York"})
			empty := map[string]any{"temperature": 0, "conditions": "", "humidity": 0}
			if got.isErr || !jsonEqual(got.structured, empty) || !jsonEqual(got.text, empty) {
				t.Errorf("reply %+v, want every field emptied", got)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.cond, func(t *testing.T) {
			tt.play(t, openRig(t, everythingSSESpec(url), tt.cond))
		})
	}
}

// TestSSEServerChaosRun runs chaos run (the binary) on a spec whose only server is
// server-everything over SSE, behind a front that notes the Authorization header, with a
// header and a URL query given as ${VAR}: the wall serves the server's tools with their
// real replies, phantom success fires on its write and the blind agent's claim over it
// is silent_wrong while the clean trial is correct (the mcp probe reads the server over
// the trial's own SSE session), chaos faults lists and classifies its tools, a command
// check is told the server is "type": "sse", and neither secret is in any file the run
// wrote or in any output.
func TestSSEServerChaosRun(t *testing.T) {
	t.Parallel()
	header, key := randomSecret("sse-hdr-"), randomSecret("sse-key-")
	everything := startEverythingSSE(t)
	target, _ := url.Parse(everything)
	var streams, messages, bare atomic.Int64
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Header.Get("Authorization") != "Bearer "+header:
			bare.Add(1)
		case r.Method == http.MethodGet:
			streams.Add(1)
		case r.Method == http.MethodPost:
			messages.Add(1)
		}
		rp.ServeHTTP(w, r)
	}))
	defer front.Close()

	env, tmp := testEnv(t, "SSE_TEST_HEADER="+header, "SSE_TEST_KEY="+key)
	script := writeFile(t, tmp, "script.yaml", `sources:
  - {tool: echo, args: {message: hello}}
writes:
  - name: simulated logging
    tool: toggle-simulated-logging
`)
	checker := writeFile(t, tmp, "check.sh", `#!/bin/sh
problems=""
echo "$CHAOS_MCP_CONFIG" | grep -q '"everything":{"type":"sse"' || problems="$problems not an sse server;"
echo "$CHAOS_MCP_CONFIG" | grep -q 'Bearer ${SSE_TEST_HEADER}' || problems="$problems no header reference;"
echo "{\"problems\": [${problems:+\"$problems\"}]}"
`)
	if err := os.Chmod(checker, 0o755); err != nil {
		t.Fatal(err)
	}
	// The probe toggles logging again on the trial's own session: "Stopped" says the
	// agent's toggle reached the server.
	specPath := writeFile(t, tmp, "sse.yaml", fmt.Sprintf(`name: sse
task: Turn simulated logging on.
agent:
  command: "{chaos} agent scripted --style blind --transport stdio --wall-command {wall} --script %s"
  profile: scripted
  timeout: 60s
servers:
  - name: everything
    url: %s/sse?key=${SSE_TEST_KEY}
    transport: sse
    headers: {Authorization: "Bearer ${SSE_TEST_HEADER}"}
probes:
  - mcp: {server: everything, tool: toggle-simulated-logging, path: "$", contains: Stopped}
  - command: %s
claim:
  status_field: "(?im)^\\W*STATUS:\\s*(ok|partial|failed)"
`, script, front.URL, yamlQuote(checker)))

	faultsOut := runChaos(t, env, time.Minute, "faults", specPath)
	if faultsOut.code != 0 {
		t.Fatalf("chaos faults exited %d\nstdout:\n%s\nstderr:\n%s", faultsOut.code, faultsOut.stdout, faultsOut.stderr)
	}
	for _, want := range []string{"phantom_success@toggle-simulated-logging", "toggle-simulated-logging", "annotation readOnlyHint: false", "echo"} {
		if !strings.Contains(faultsOut.stdout, want) {
			t.Errorf("chaos faults does not show %q:\n%s", want, faultsOut.stdout)
		}
	}

	out := filepath.Join(tmp, "run")
	start := time.Now()
	res := runChaos(t, env, 4*time.Minute, "run", specPath, "--out", out, "--only", "clean,phantom_success@toggle-simulated-logging")
	if res.code != 0 {
		t.Fatalf("chaos run exited %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	t.Logf("chaos run took %s", time.Since(start).Round(time.Millisecond))
	got := trialResults(t, out)
	want := map[string]string{
		"main clean": "correct",
		"main phantom_success@toggle-simulated-logging": "silent_wrong",
	}
	if len(got) != len(want) {
		t.Errorf("%d trials, want %d: %v", len(got), len(want), got)
	}
	for k, v := range want {
		r, ok := got[k]
		if !ok {
			t.Errorf("%s: no result (have %v)", k, got)
			continue
		}
		if r.Verdict != v {
			t.Errorf("%s: verdict %s (%s), want %s; checks %+v; closing %q", k, r.Verdict, r.VerdictWhy, v, r.Checks, r.Closing)
		}
		if len(r.Checks) < 2 || !r.Checks[1].OK || !strings.HasPrefix(r.Checks[1].Check, "command ") {
			t.Errorf("%s: the command check did not pass: %+v", k, r.Checks)
		}
	}
	if r := got["main clean"]; len(r.Checks) == 0 || !r.Checks[0].OK {
		t.Errorf("clean: the probe did not see the toggle on the server: %+v", r.Checks)
	}
	if r := got["main phantom_success@toggle-simulated-logging"]; len(r.Checks) == 0 || r.Checks[0].OK {
		t.Errorf("phantom success: the probe saw a toggle that never reached the server: %+v", r.Checks)
	}

	// The records: the wall served the server's tools with their real replies, and the
	// fault fired on the write.
	records, _ := filepath.Glob(filepath.Join(out, "trials", "*", "*", "*", "record.jsonl"))
	var echoed, fired, performed int
	for _, p := range records {
		l, err := record.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range l.Calls() {
			switch {
			case c.Tool == "echo" && c.Reply == "Echo: hello" && !c.IsError:
				echoed++
			case c.Tool == "toggle-simulated-logging" && c.Hit != nil && c.Hit.Fired && c.Hit.Family == "phantom_success" && !c.Hit.Performed:
				fired++
			case c.Tool == "toggle-simulated-logging" && (c.Hit == nil || !c.Hit.Fired) && strings.Contains(c.Reply, "Started simulated"):
				performed++
			}
		}
	}
	if len(records) != 2 || echoed != 2 || fired != 1 || performed != 1 {
		t.Errorf("%d records: %d real echoes (want 2), %d phantom successes fired (want 1), %d real toggles (want 1)", len(records), echoed, fired, performed)
	}

	// The header reached the server, expanded, on the event streams and on the messages.
	if streams.Load() < 3 || messages.Load() < 6 || bare.Load() != 0 {
		t.Errorf("with the header: %d streams (want plan, chaos faults and 2 trials), %d messages; %d requests without it", streams.Load(), messages.Load(), bare.Load())
	}

	// Neither secret is in any output or any file the runs wrote: the run folder, the data
	// directory (Temporal's history, logs) and the temporary folder (sandboxes).
	for _, s := range []string{header, key} {
		for name, text := range map[string]string{"chaos run stdout": res.stdout, "chaos run stderr": res.stderr, "chaos faults output": faultsOut.stdout + faultsOut.stderr} {
			if strings.Contains(text, s) {
				t.Errorf("%s holds a secret", name)
			}
		}
	}
	files := 0
	filepath.WalkDir(tmp, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		files++
		for _, s := range []string{header, key} {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds a secret", p)
			}
		}
		return nil
	})
	if files < 10 {
		t.Errorf("only %d files searched", files)
	}
}

// TestSSEServerRefusedAtPlanTime: an SSE server whose URL refuses connections stops
// chaos run and chaos faults before anything runs, with exit 1 and a message naming the
// server and the spec.
func TestSSEServerRefusedAtPlanTime(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := fmt.Sprintf("http://%s/sse", ln.Addr())
	ln.Close()
	env, tmp := testEnv(t)
	specPath := writeFile(t, tmp, "bad.yaml", "name: bad\ntask: anything\nagent: {command: \"true\"}\nservers:\n  - {name: away, url: \""+refused+"\", transport: sse}\n")
	for _, args := range [][]string{{"run", specPath, "--out", filepath.Join(tmp, "run")}, {"faults", specPath}} {
		start := time.Now()
		res := runChaos(t, env, time.Minute, args...)
		if res.code != 1 {
			t.Errorf("chaos %s: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", args[0], res.code, res.stdout, res.stderr)
		}
		for _, w := range []string{`server "away" (` + refused + ` over SSE) did not answer the MCP handshake`, "connection refused", specPath} {
			if !strings.Contains(res.stderr, w) {
				t.Errorf("chaos %s: stderr %q\nwant it to contain %q", args[0], res.stderr, w)
			}
		}
		if d := time.Since(start); d > 40*time.Second {
			t.Errorf("chaos %s took %s to refuse", args[0], d)
		}
	}
	if _, err := os.Stat(filepath.Join(tmp, "run", "trials")); err == nil {
		t.Error("chaos run ran trials against a server it could not reach")
	}
}

// TestSSEServerRecord: chaos record takes an SSE server as --server sse+http://...; the
// spec it writes says transport: sse, and chaos faults reaches the server from it.
func TestSSEServerRecord(t *testing.T) {
	t.Parallel()
	env, tmp := testEnv(t)
	everything := startEverythingSSE(t)
	script := writeFile(t, tmp, "script.yaml", "sources:\n  - {tool: echo, args: {message: hello}}\nwrites:\n  - name: simulated logging\n    tool: toggle-simulated-logging\n")
	out := filepath.Join(tmp, "recorded.yaml")
	rec := runChaos(t, env, 2*time.Minute, "record", "--allow-real-calls", "--task", "Turn simulated logging on.", "--server", "sse+"+everything, "--out", out,
		"--", chaosBin, "agent", "scripted", "--style", "blind", "--transport", "stdio", "--wall-command", "{wall}", "--script", script)
	if rec.code != 0 {
		t.Fatalf("chaos record exited %d\nstdout:\n%s\nstderr:\n%s", rec.code, rec.stdout, rec.stderr)
	}
	text, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := `# - server "remote": ` + everything + ` over SSE`; !strings.Contains(string(text), want) {
		t.Errorf("the recorded spec has no line %q:\n%s", want, text)
	}
	s, err := spec.Load(out)
	if err != nil {
		t.Fatalf("the recorded spec does not load: %v\n%s", err, text)
	}
	if len(s.Servers) != 1 || s.Servers[0].URL != everything || !s.Servers[0].SSE() {
		t.Errorf("servers %+v, want %s over SSE", s.Servers, everything)
	}
	if et := s.Servers[0].Tools["echo"]; et.Reply != "Echo: hello" {
		t.Errorf("echo in the spec: %+v", et)
	}
	faultsOut := runChaos(t, env, time.Minute, "faults", out)
	if faultsOut.code != 0 || !strings.Contains(faultsOut.stdout, "phantom_success@toggle-simulated-logging") {
		t.Errorf("chaos faults on the recorded spec: exit %d\nstdout:\n%s\nstderr:\n%s", faultsOut.code, faultsOut.stdout, faultsOut.stderr)
	}
}
