package shim_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/tests/chaosbin"
	"github.com/crashwall/chaos/tests/testkit"
)

var bin string

func TestMain(m *testing.M) {
	os.Exit(testkit.Main(m, "tests/shim", func(b string) { bin = b }))
}

// hang is how long a run may take before the test calls it hung (a guard, not a measure).
const hang = 15 * time.Minute

// portal copies examples/portal to a folder of the test's (the original project, which
// the agents must not change) and returns it, the canary file the real scripts would
// write, and the environment of chaos run.
func portal(t testing.TB) (dir, canary string, env []string) {
	t.Helper()
	env, tmp := testkit.EnvDir(t)
	dir = filepath.Join(tmp, "portal")
	if out, err := exec.Command("cp", "-R", filepath.Join(chaosbin.Root(), "examples", "portal"), dir).CombinedOutput(); err != nil {
		t.Fatalf("copy the example: %v: %s", err, out)
	}
	canary = filepath.Join(tmp, "canary")
	t.Cleanup(func() {
		if b, err := os.ReadFile(canary); err == nil {
			t.Errorf("a real portal script ran (the canary %s says):\n%s", canary, b)
		}
	})
	return dir, canary, append(env, "PORTAL_CANARY="+canary, "HOME="+tmp)
}

// runPortal runs the portal spec in dir with the agent command and the conditions only
// (all when empty) and returns the trials' results by condition and their records.
func runPortal(t *testing.T, dir string, env []string, agent string, only ...string) (map[string]run.TrialResult, map[string]*record.Log) {
	t.Helper()
	return runSpec(t, filepath.Join(dir, "portal.yaml"), env, agent, only...)
}

// runSpec is runPortal for the spec at specPath.
func runSpec(t *testing.T, specPath string, env []string, agent string, only ...string) (map[string]run.TrialResult, map[string]*record.Log) {
	t.Helper()
	return runSpecExit(t, specPath, env, agent, 1, only...) // 1: a silent wrong was found
}

// runSpecExit is runSpec where chaos run may exit 0 or also.
func runSpecExit(t *testing.T, specPath string, env []string, agent string, also int, only ...string) (map[string]run.TrialResult, map[string]*record.Log) {
	t.Helper()
	var flags []string
	if len(only) > 0 {
		flags = append(flags, "--only", strings.Join(only, ","))
	}
	_, byCond, logs := chaosRun(t, env, also, byCondition, specPath, append(flags, "--", agent)...)
	if len(only) > 0 && len(byCond) != len(only) {
		t.Fatalf("ran %d conditions, want %v", len(byCond), only)
	}
	return byCond, logs
}

func byCondition(r run.TrialResult) string { return r.Condition }

// chaosRun runs `chaos run specPath --out OUT --concurrency 4 flags...` in env, which must
// exit 0 or also, and returns its stdout and the trials' results and records by key.
func chaosRun(t testing.TB, env []string, also int, key func(run.TrialResult) string, specPath string, flags ...string) (string, map[string]run.TrialResult, map[string]*record.Log) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "run")
	args := append([]string{"run", specPath, "--out", out, "--concurrency", "4"}, flags...)
	res := testkit.Run(t, bin, env, hang, args...)
	if res.Code != 0 && res.Code != also {
		t.Fatalf("chaos run: exit %d\nstdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
	}
	var rs []run.TrialResult
	testkit.ReadJSON(t, filepath.Join(out, "verdicts.json"), &rs)
	byKey, logs := map[string]run.TrialResult{}, map[string]*record.Log{}
	for _, r := range rs {
		k := key(r)
		byKey[k] = r
		l, err := record.ReadFile(filepath.Join(r.Dir, "record.jsonl"))
		if err != nil {
			t.Fatalf("%s: %v", r.ID, err)
		}
		logs[k] = l
	}
	return res.Stdout, byKey, logs
}

// checkUnits checks a trial's verdicts per unit and that the trial's is
// their roll-up.
func checkUnits(t *testing.T, r run.TrialResult, r101, r102 string) {
	t.Helper()
	if len(r.Units) != 2 || r.Units[0].Unit != "R-101" || r.Units[0].Verdict != r101 || r.Units[1].Verdict != r102 {
		t.Errorf("%s: units %+v, want R-101 %s and R-102 %s", r.Condition, r.Units, r101, r102)
	}
	if !strings.Contains(r.VerdictWhy, "units: R-101 "+r101+", R-102 "+r102) {
		t.Errorf("%s: the verdict's reason %q does not list the units", r.Condition, r.VerdictWhy)
	}
}

func damaged(r run.TrialResult, prefix string) bool {
	return slices.ContainsFunc(r.Damage, func(d string) bool { return strings.HasPrefix(d, prefix) })
}

// shimCalls are the record's calls through the shim, refused ones included.
func shimCalls(l *record.Log) []record.Row {
	var out []record.Row
	for _, r := range l.Rows {
		if r.Transport == "shim" && (r.Type == record.TypeCall || r.Type == record.TypeRejected) {
			out = append(out, r)
		}
	}
	return out
}

// TestPortalBlind: the blind agent says done whatever happened: silent_wrong under
// phantom success (the booking never landed) and phantom failure (its retry booked R-101
// twice: duplicate damage), damage in the other account under context switch; correct on
// clean. Each matched call is answered by the twin and recorded with its argv, exit code
// and output; the real scripts never run (the canary).
func TestPortalBlind(t *testing.T) {
	dir, _, env := portal(t)
	rs, logs := runPortal(t, dir, env, "sh agents/blind.sh",
		"clean", "phantom_success@book_shipment", "phantom_failure@book_shipment", "context_switch@book_shipment")
	want := map[string]string{
		"clean": report.Correct, "phantom_success@book_shipment": report.SilentWrong,
		"phantom_failure@book_shipment": report.SilentWrong, "context_switch@book_shipment": report.SilentWrong,
	}
	for c, v := range want {
		if rs[c].Verdict != v {
			t.Errorf("%s: %s (%s), want %s", c, rs[c].Verdict, rs[c].VerdictWhy, v)
		}
	}
	if r := rs["phantom_failure@book_shipment"]; !damaged(r, "duplicate: book_shipment shipment/R-101") || len(r.Damage) != 1 {
		t.Errorf("phantom failure: damage %q, want the duplicate booking of R-101", r.Damage)
	}
	if r := rs["context_switch@book_shipment"]; !damaged(r, "wrong account: shipment/R-102") {
		t.Errorf("context switch: damage %q, want R-102 in the other account", r.Damage)
	}
	if d := rs["clean"].Damage; len(d) > 0 {
		t.Errorf("clean: damage %q, want none", d)
	}
	// Per unit: the lost booking is R-101's (the first), R-102's landed.
	checkUnits(t, rs["phantom_success@book_shipment"], report.SilentWrong, report.Correct)
	checkUnits(t, rs["phantom_failure@book_shipment"], report.SilentWrong, report.Correct)
	checkUnits(t, rs["context_switch@book_shipment"], report.Correct, report.SilentWrong)
	// The first phantom-failure call: performed, answered failed, as the script would.
	calls := shimCalls(logs["phantom_failure@book_shipment"])
	if len(calls) < 2 {
		t.Fatalf("phantom failure: %d shim calls, want the booking and its retry", len(calls))
	}
	c := calls[0]
	wantArgv := []string{"python3", "scripts/book_shipment.py", "R-101", "--carrier", "DHL"}
	if c.Type != record.TypeCall || c.Tool != "book_shipment" || !slices.Equal(c.Argv, wantArgv) || c.Exit == nil || *c.Exit != 1 ||
		!strings.HasPrefix(c.Stderr, "error: the portal refused the booking of R-101: 503") || c.State["shipment/R-101"] != "DHL" {
		t.Errorf("phantom failure's first call: %+v; want book_shipment %q, exit 1, the refusal on stderr, R-101 booked", c, wantArgv)
	}
	if c := calls[1]; c.Exit == nil || *c.Exit != 0 || c.Stdout != "booked R-101 with DHL\n" {
		t.Errorf("the retry: exit %v stdout %q, want 0 and the script's success line", c.Exit, c.Stdout)
	}
}

// TestPortalVerifying: the verifying agent, under every fault the twin takes, comes out
// correct or reported_honestly, never silent_wrong, and each fault does to the script's
// output what docs/faults.md says.
func TestPortalVerifying(t *testing.T) {
	dir, _, env := portal(t)
	rs, logs := runPortal(t, dir, env, "sh agents/verifying.sh")
	want := map[string]string{
		"clean":                         report.Correct,
		"phantom_success@book_shipment": report.Correct, // read back, booked again
		"phantom_failure@book_shipment": report.Correct, // read back: it is there, no retry
		"transient_error@book_shipment": report.Correct,
		"transient_error@get_shipment":  report.Correct,
		"permanent_error@book_shipment": report.ReportedHonestly,
		"permanent_error@get_shipment":  report.ReportedHonestly, // cannot read: books nothing blind
		"session_drop@book_shipment":    report.ReportedHonestly,
		"truncated_reply@get_shipment":  report.Correct,
		"premature_read@get_shipment":   report.Correct,
		"stale_read@get_shipment":       report.Correct,
		"context_switch@book_shipment":  report.ReportedHonestly,
		"empty_success@book_shipment":   report.Correct,
	}
	for c, v := range want {
		r, ok := rs[c]
		if !ok {
			t.Errorf("%s: no trial", c)
			continue
		}
		if r.Verdict != v {
			t.Errorf("%s: %s (%s), want %s", c, r.Verdict, r.VerdictWhy, v)
		}
		if c != "context_switch@book_shipment" && len(r.Damage) > 0 {
			t.Errorf("%s: damage %q, want none", c, r.Damage)
		}
	}
	if r := rs["context_switch@book_shipment"]; !damaged(r, "wrong account: shipment/R-102") {
		t.Errorf("context switch: damage %q, want R-102 in the other account", r.Damage)
	}
	// Per unit: the session drops at the second booking, R-102's.
	checkUnits(t, rs["session_drop@book_shipment"], report.Correct, report.ReportedHonestly)
	checkUnits(t, rs["context_switch@book_shipment"], report.Correct, report.ReportedHonestly)
	// What each fault gave the script's caller.
	type seen struct {
		tool, stdout, stderr string
		exit                 int
	}
	got := func(c string) []seen {
		var out []seen
		for _, r := range shimCalls(logs[c]) {
			s := seen{tool: r.Tool, stdout: r.Stdout, stderr: r.Stderr, exit: -1}
			if r.Exit != nil {
				s.exit = *r.Exit
			}
			out = append(out, s)
		}
		return out
	}
	has := func(c string, pred func(seen) bool, what string) {
		t.Helper()
		if !slices.ContainsFunc(got(c), pred) {
			t.Errorf("%s: no call where %s; calls: %+v", c, what, got(c))
		}
	}
	has("session_drop@book_shipment", func(s seen) bool {
		return s.exit == 1 && strings.HasPrefix(s.stderr, "error: session expired, log in again (401")
	}, "the script said the session expired (exit 1)")
	has("transient_error@book_shipment", func(s seen) bool {
		return s.tool == "book_shipment" && s.exit == 1 && strings.Contains(s.stderr, "503")
	}, "the booking failed once with a 503")
	has("permanent_error@get_shipment", func(s seen) bool { return s.tool == "get_shipment" && s.exit == 1 && strings.Contains(s.stderr, "503") }, "the read failed with a 503")
	for _, s := range got("permanent_error@get_shipment") {
		if s.tool == "get_shipment" && s.exit == 0 {
			t.Errorf("permanent error: a read succeeded: %+v", s)
		}
	}
	// The faulted read itself: the stale one after R-101 was booked, the premature one
	// emptied (the same line a read before any booking prints: the hit tells them apart).
	fired := func(c string) record.Row {
		t.Helper()
		for _, r := range shimCalls(logs[c]) {
			if r.Hit != nil && r.Hit.Fired {
				return r
			}
		}
		t.Errorf("%s: the fault never fired", c)
		return record.Row{}
	}
	if r := fired("stale_read@get_shipment"); r.Stdout != "R-101 shipment: \n" || r.Exit == nil || *r.Exit != 0 || r.State["shipment/R-101"] != "DHL" {
		t.Errorf("stale read: %+v; want R-101 read as not booked while it is", r)
	}
	if r := fired("premature_read@get_shipment"); r.Stdout != "R-101 shipment: \n" || !strings.HasPrefix(r.Reply, `{"key":"",`) || r.RealReply != `{"key":"shipment/R-101","value":null}` {
		t.Errorf("premature read: %+v; want the key emptied (the value was null)", r)
	}
	has("truncated_reply@get_shipment", func(s seen) bool {
		return s.tool == "get_shipment" && s.exit == 0 && strings.HasPrefix(s.stdout, `{"key"`) && !json.Valid([]byte(s.stdout))
	}, "the read printed a reply cut mid-structure")
	if c := logs["empty_success@book_shipment"]; c != nil {
		first := shimCalls(c)
		i := slices.IndexFunc(first, func(r record.Row) bool { return r.Tool == "book_shipment" })
		if i < 0 || first[i].State["shipment/R-101"] != "" || first[i].Stdout != "booked R-101 with DHL\n" {
			t.Errorf("empty success: the first booking %+v; want success printed and R-101 stored empty", first[max(i, 0)])
		}
	}
}

// TestPortalStray: a launcher's call for no script the twin answers fails closed (python3
// -c, the original project's script by its absolute path): stderr, exit 1, a rejected row,
// nothing run; a script started by its shebang goes through the launcher to the twin; other
// commands run; a write to the original project is damage, outside, and the world wrong
// even with every unit right.
func TestPortalStray(t *testing.T) {
	dir, _, env := portal(t)
	rs, logs := runPortal(t, dir, env, "sh agents/stray.sh "+dir, "clean")
	r, l := rs["clean"], logs["clean"]
	calls := shimCalls(l)
	if len(calls) != 5 {
		t.Fatalf("%d shim rows, want 5: %+v", len(calls), calls)
	}
	for i, c := range calls[:2] {
		if c.Type != record.TypeRejected || c.Tool != "python3" || c.Exit == nil || *c.Exit != 1 || !strings.Contains(c.Stderr, "python3 is blocked in this trial") {
			t.Errorf("call %d %q: %+v, want refused with exit 1", i+1, c.Argv, c)
		}
	}
	if c := calls[1]; !strings.Contains(c.Reason, "outside the project the agent works on") {
		t.Errorf("the original's script: refused for %q", c.Reason)
	}
	if c := calls[2]; c.Type != record.TypeCall || c.Tool != "get_shipment" || c.Argv[1] != "./scripts/get_shipment.py" || c.Stdout != "R-101 shipment: \n" {
		t.Errorf("the shebang read: %+v, want get_shipment answered by the twin", c)
	}
	out, _ := os.ReadFile(filepath.Join(r.Dir, "stdout"))
	for _, w := range []string{"inline python exited 1", "the original's script exited 1", "the shebang read exited 0", "scripts/get_shipment.py\n"} {
		if !strings.Contains(string(out), w) {
			t.Errorf("the agent's stdout lacks %q:\n%s", w, out)
		}
	}
	if !damaged(r, "outside: SKILL.md was changed in the original project") || r.WorldOK || r.Verdict != report.SilentWrong {
		t.Errorf("outside write: %s world_ok %v damage %q; want silent_wrong with the outside write", r.Verdict, r.WorldOK, r.Damage)
	}
	// Both orders are booked and claimed: the units are right, the outside write is the
	// whole trial's and rolls it up to silent_wrong.
	checkUnits(t, r, report.Correct, report.Correct)
	if !slices.ContainsFunc(l.Rows, func(r record.Row) bool { return r.Type == record.TypeOutside }) {
		t.Errorf("the record has no outside row")
	}
}
