package browser

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/tests/browser/site"
	"github.com/crashwall/chaos/tests/testkit"
)

// lostSpec: the gated agent saves L-1, waits for the test's gate, then tries to save L-2
// (on its connection, then on a new one to {cdp_url}) and claims both.
const lostSpec = `name: browser-lost
task: Save the contacts L-1 and L-2 with the form at %[1]s.
agent:
  command: node "$CHAOS_JS/browser-records-agent.mjs" {cdp_url} gated %[1]s {sandbox} L-1 L-2
  timeout: 10m
browser:
  intercept: ["%[1]s/api/*"]
probes:
  - command: curl -s "%[1]s/check?name=L-2&email=$(basename "$PWD")@example.org"
`

// TestGuardLostUnderRun kills the trial's browser under chaos run once the agent's first
// write has reached the site: the trial's result is no verdict with the reason guard_lost
// (the agent's claim of both records is not scored), and none of the agent's writes after
// the kill reaches the site, though it tries on its old connection and on a new one.
func TestGuardLostUnderRun(t *testing.T) {
	testkit.Node(t, "playwright-core")
	st, err := site.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	dir := t.TempDir()
	specPath := filepath.Join(dir, "browser-lost.yaml")
	gate := filepath.Join(dir, "gate")
	if err := os.WriteFile(specPath, []byte(fmt.Sprintf(lostSpec, st.URL)), 0o644); err != nil {
		t.Fatal(err)
	}
	env, tmp := testkit.EnvDir(t, "CHAOS_JS="+testkit.JSDir(), "CHAOS_TEST_GATE="+gate)
	out := filepath.Join(t.TempDir(), "run")
	p := testkit.Start(t, chaosBin, env, "run", specPath, "--only", "clean", "--data-dir", t.TempDir(), "--out", out)
	exited := func() bool { _, done := p.Exited(); return done }

	// The first save over, its answer read by the agent (GATE.saved): killed any sooner, on a
	// slow machine, the browser would take the first save's answer with it.
	saved := func() bool { _, err := os.Stat(gate + ".saved"); return err == nil }
	testkit.WaitFor(t, runTimeout, "the agent's first save", func() bool { return saved() || exited() })
	if !saved() {
		t.Fatalf("chaos run ended before the agent's first save\nstdout:\n%s\nstderr:\n%s", p.Stdout, p.Stderr)
	}
	// The browser's main process (its profile is under the worker's TMPDIR), killed alone,
	// as a crash would end it: its network process may outlive it for a moment.
	pid := chromiumMain(t, filepath.Join(tmp, "tmp", "chaos-work-"+strconv.Itoa(os.Getuid()), "browsers")+string(filepath.Separator))
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	atKill := st.Writes()
	var rec string
	testkit.WaitFor(t, runTimeout, "the guard's guard_lost row in the trial's record", func() bool {
		m, _ := filepath.Glob(filepath.Join(out, "trials", "*", "*", "*", "record.jsonl"))
		for _, f := range m {
			if b, _ := os.ReadFile(f); bytes.Contains(b, []byte(`"guard_lost: `)) {
				rec = f
				return true
			}
		}
		return exited()
	})
	if rec == "" {
		t.Fatalf("chaos run ended with no guard_lost in a record\nstdout:\n%s\nstderr:\n%s", p.Stdout, p.Stderr)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code := p.Wait(t, runTimeout)
	t.Logf("chaos run (exit %d):\n%s", code, p.Stdout)

	var results []run.TrialResult
	testkit.ReadJSON(t, filepath.Join(out, "verdicts.json"), &results)
	if len(results) != 1 {
		t.Fatalf("%d trials, want 1: %+v", len(results), results)
	}
	r := results[0]
	if r.Verdict != "no_verdict" || !strings.Contains(r.VerdictWhy, "guard_lost") {
		t.Errorf("verdict %s (%s), want no_verdict for guard_lost; closing %q", r.Verdict, r.VerdictWhy, r.Closing)
	}
	if !strings.Contains(r.Closing, "L-2: DONE") {
		t.Errorf("the agent's closing %q does not claim L-2: the test shows nothing about a claim left unscored", r.Closing)
	}
	// The agent did try to write after the kill, both ways, and neither reached the site.
	stderr, _ := os.ReadFile(filepath.Join(r.Dir, "stderr"))
	t.Logf("the agent's stderr:\n%s", stderr)
	for _, w := range []string{"on the first connection, L-2 failed", "on a new connection, L-2 failed"} {
		if !strings.Contains(string(stderr), w) {
			t.Errorf("the agent's stderr lacks %q:\n%s", w, stderr)
		}
	}
	if n := st.Writes(); n != 1 || atKill != 1 {
		t.Errorf("the site received %d writes (%d at the kill), want 1: %+v", n, atKill, st.Requests())
	}
	for _, rc := range st.Records() {
		if rc.Name == "L-2" {
			t.Errorf("L-2 reached the site: %+v", rc)
		}
	}
	// The record: guard_lost, and no request of the page's recorded after it.
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	lost := false
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var row struct{ Type, Reason, Transport string }
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("record line %q: %v", line, err)
		}
		if row.Type == "error" && strings.HasPrefix(row.Reason, "guard_lost: ") {
			lost = true
		} else if lost && row.Transport == "cdp" && row.Type == "call" {
			t.Errorf("a request recorded after guard_lost: %s", line)
		}
	}
	if !lost {
		t.Errorf("no guard_lost row in %s", rec)
	}
}

// chromiumMain is the pid of the one Chromium main process whose profile is under prefix
// (the main process has no --type= argument).
func chromiumMain(t *testing.T, prefix string) int {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var found []int
	for _, f := range procs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		main, ours := true, false
		for _, a := range args {
			main = main && !strings.HasPrefix(a, "--type=")
			ours = ours || strings.HasPrefix(a, "--user-data-dir="+prefix)
		}
		if main && ours {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
			found = append(found, pid)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d Chromium main processes with a profile under %s, want 1: %v", len(found), prefix, found)
	}
	return found[0]
}
