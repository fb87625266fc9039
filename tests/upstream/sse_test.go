package upstream_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/tests/testkit"
)

// server-everything speaks only the older HTTP+SSE transport when started with "sse":
// GET /sse opens the event stream, whose first event names /message?sessionId=... for
// the client's messages. These tests put it behind the wall as `transport: sse`, which
// the wall reaches natively (the Go SDK's SSE client), with no bridge. The fault
// families over SSE are TestEverythingOverHTTPAndSSEFaults/sse (faults_test.go), and
// an SSE URL that refuses connections is a case of TestBadServersAtPlanTime.

// TestSSEServerChaosRun runs chaos run (the binary) on a spec whose only server is
// server-everything over SSE, behind a front that notes the Authorization header, with a
// header and a URL query given as ${VAR}: the wall serves the server's tools with their
// real replies, phantom success fires on its write and the blind agent's claim over it
// is silent_wrong while the clean trial is correct (the mcp probe reads the server over
// the trial's own SSE session), chaos faults lists and classifies its tools, a command
// check is told the server is "type": "sse", and neither secret is in any file the run
// wrote, in any output or in the process list while chaos faults and chaos run go on.
func TestSSEServerChaosRun(t *testing.T) {
	t.Parallel()
	header, key := testkit.RandomSecret("sse-hdr-"), testkit.RandomSecret("sse-key-")
	front := startHeaderFront(t, startEverythingSSE(t), header)

	env, tmp := testEnv(t, "SSE_TEST_HEADER="+header, "SSE_TEST_KEY="+key)
	script := writeFile(t, tmp, "script.yaml", `sources:
  - {tool: echo, args: {message: hello}}
writes:
  - name: simulated logging
    tool: toggle-simulated-logging
`)
	checker := writeConfigCheck(t, tmp,
		configWant{`"everything":{"type":"sse"`, "not an sse server"},
		configWant{`Bearer ${SSE_TEST_HEADER}`, "no header reference"})
	// The probe toggles logging again on the trial's own session: "Stopped" says the
	// agent's toggle reached the server.
	specPath := writeFile(t, tmp, "sse.yaml", fmt.Sprintf(`name: sse
task: Turn simulated logging on.
agent:
  command: "{chaos} agent scripted --style blind --transport stdio --wall-command {wall} --script %s"
  profile: scripted
  timeout: 10m
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

	// Watch the process list while chaos faults and chaos run go on.
	stopWatching := watchProcessList(t, header, key)
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
	res := runChaos(t, env, 15*time.Minute, "run", specPath, "--out", out, "--only", "clean,phantom_success@toggle-simulated-logging")
	stopWatching()
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
		commandCheckPassed(t, k, r)
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
	if front.gets.Load() < 3 || front.posts.Load() < 6 || front.bare.Load() != 0 {
		t.Errorf("with the header: %d streams (want plan, chaos faults and 2 trials), %d messages; %d requests without it", front.gets.Load(), front.posts.Load(), front.bare.Load())
	}

	// Neither secret is in any output or any file the runs wrote.
	noSecrets(t, tmp, map[string]string{"chaos run stdout": res.stdout, "chaos run stderr": res.stderr, "chaos faults output": faultsOut.stdout + faultsOut.stderr}, header, key)
}

// TestSSEServerRecord: chaos record takes an SSE server as --server sse+http://...; the
// spec it writes says transport: sse, and chaos faults reaches the server from it.
func TestSSEServerRecord(t *testing.T) {
	t.Parallel()
	env, tmp := testEnv(t)
	everything := startEverythingSSE(t)
	script := writeFile(t, tmp, "script.yaml", "sources:\n  - {tool: echo, args: {message: hello}}\nwrites:\n  - name: simulated logging\n    tool: toggle-simulated-logging\n")
	out := filepath.Join(tmp, "recorded.yaml")
	rec := runChaos(t, env, 15*time.Minute, "record", "--allow-real-calls", "--task", "Turn simulated logging on.", "--server", "sse+"+everything, "--out", out,
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
