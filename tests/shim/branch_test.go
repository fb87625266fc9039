package shim_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/tests/testkit"
)

// phantom loses R-102's booking (the 2nd): the branched trial starts at it, and its
// position counts on from the clean trial's booking of R-101.
const phantom = "phantom_success@book_shipment#2"

// runBranch runs the portal with the agent on clean and phantom success, with --branch
// when branch is set, and returns chaos run's stdout, the results and records by
// condition.
func runBranch(t testing.TB, dir string, env []string, agent string, branch bool) (string, map[string]run.TrialResult, map[string]*record.Log) {
	t.Helper()
	return runBranchOf(t, dir, env, agent, phantom, branch)
}

// runBranchOf is runBranch with the fault condition phantom replaced by fault.
func runBranchOf(t testing.TB, dir string, env []string, agent, fault string, branch bool) (string, map[string]run.TrialResult, map[string]*record.Log) {
	t.Helper()
	flags := []string{"--only", "clean," + fault}
	if branch {
		flags = append(flags, "--branch")
	}
	stdout, byCond, logs := chaosRun(t, env, 1, byCondition, filepath.Join(dir, "portal.yaml"), append(flags, "--", agent)...)
	if len(byCond) != 2 {
		t.Fatalf("ran %d trials, want clean and %s", len(byCond), fault)
	}
	return stdout, byCond, logs
}

// bookings are the record's calls of book_shipment for the order.
func bookings(l *record.Log, order string) int {
	n := 0
	for _, r := range shimCalls(l) {
		var args map[string]any
		json.Unmarshal(r.Args, &args)
		if r.Tool == "book_shipment" && args["order"] == order {
			n++
		}
	}
	return n
}

// checkBranched checks a --branch run: the clean trial ran first and whole, the fault
// trial started from its state before R-102's booking (R-101 booked in its initial state,
// no call booking R-101 in its record), R-101 judged branched and correct.
func checkBranched(t *testing.T, stdout string, rs map[string]run.TrialResult, logs map[string]*record.Log) {
	t.Helper()
	if !strings.Contains(stdout, "branch: clean trials first") || !strings.Contains(stdout, "branch: 1 fault trials started from their clean trial\n") {
		t.Errorf("chaos run does not say the run branches:\n%s", stdout)
	}
	clean, fault := logs["clean"], logs[phantom]
	if bookings(clean, "R-101") == 0 || bookings(clean, "R-102") == 0 {
		t.Errorf("the clean trial did not book both orders: %+v", shimCalls(clean))
	}
	if clean.End == nil || !clean.End.Time.Before(fault.Start.Time) {
		t.Errorf("the fault trial started (%v) before the clean trial ended (%+v)", fault.Start.Time, clean.End)
	}
	if got := fault.Start.InitialState["shipment/R-101"]; got != "DHL" {
		t.Errorf("the fault trial's initial state %v, want R-101 booked (DHL) from the clean trial", fault.Start.InitialState)
	}
	if _, ok := fault.Start.InitialState["shipment/R-102"]; ok {
		t.Errorf("the fault trial's initial state %v holds R-102: it branched after the last unit's write", fault.Start.InitialState)
	}
	if n := bookings(fault, "R-101"); n != 0 {
		t.Errorf("the branched fault trial booked R-101 %d times: it should start after R-101 was done", n)
	}
	if bookings(fault, "R-102") == 0 {
		t.Errorf("the branched fault trial never booked R-102: %+v", shimCalls(fault))
	}
	r := rs[phantom]
	if !strings.HasPrefix(r.Branch, "from "+rs["clean"].ID+" at row ") {
		t.Errorf("the fault trial's branch %q, want from %s", r.Branch, rs["clean"].ID)
	}
	if len(r.Units) != 2 || !r.Units[0].Branched || r.Units[1].Branched {
		t.Errorf("units %+v: want R-101 branched, R-102 not", r.Units)
	}
	if rs["clean"].Branch != "" {
		t.Errorf("the clean trial has a branch %q", rs["clean"].Branch)
	}
	t.Logf("trial time: clean %v, branched %s %v", rs["clean"].Duration, phantom, r.Duration)
}

// TestPortalBranch: chaos run --branch on examples/portal (units ). The
// clean trial runs first; the phantom-success trial starts from its twin state just before
// R-102's booking, its task told R-101 is done: its record has no booking of R-101, and
// its verdicts are right (the blind agent silent_wrong on branched and
// correct; the verifying agent correct). Without --branch the fault trial runs whole.
func TestPortalBranch(t *testing.T) {
	dir, _, env := portal(t)

	stdout, rs, logs := runBranch(t, dir, env, "sh agents/blind.sh {task}", true)
	checkBranched(t, stdout, rs, logs)
	if rs["clean"].Verdict != report.Correct {
		t.Errorf("blind clean: %s (%s), want correct", rs["clean"].Verdict, rs["clean"].VerdictWhy)
	}
	checkUnits(t, rs[phantom], report.Correct, report.SilentWrong)
	if v := rs[phantom].Verdict; v != report.SilentWrong {
		t.Errorf("blind %s: %s (%s), want silent_wrong", phantom, v, rs[phantom].VerdictWhy)
	}

	stdout, rs, logs = runBranch(t, dir, env, "sh agents/verifying.sh", true)
	checkBranched(t, stdout, rs, logs)
	for _, c := range []string{"clean", phantom} {
		if rs[c].Verdict != report.Correct {
			t.Errorf("verifying %s: %s (%s), want correct", c, rs[c].Verdict, rs[c].VerdictWhy)
		}
	}

	// Without --branch, nothing changes: the fault trial books R-101 itself.
	stdout, rs, logs = runBranch(t, dir, env, "sh agents/blind.sh {task}", false)
	if strings.Contains(stdout, "branch:") {
		t.Errorf("a run without --branch speaks of branching:\n%s", stdout)
	}
	r := rs[phantom]
	if r.Branch != "" || bookings(logs[phantom], "R-101") == 0 || len(logs[phantom].Start.InitialState) != 0 {
		t.Errorf("without --branch: branch %q, R-101 booked %d times, initial state %v; want the trial whole",
			r.Branch, bookings(logs[phantom], "R-101"), logs[phantom].Start.InitialState)
	}
	checkUnits(t, r, report.Correct, report.SilentWrong)
	t.Logf("trial time without --branch: clean %v, %s %v", rs["clean"].Duration, phantom, r.Duration)
}

// TestPortalBranchNone: a clean trial whose world is wrong (the agent booked R-101 only)
// gives no branch: the fault trial runs whole (it books R-101 itself) and the run says so
// in one line; a task of one unit has no branch point: chaos run --branch says so in one
// line when it plans.
func TestPortalBranchNone(t *testing.T) {
	dir, _, env := portal(t)
	stdout, rs, logs := runBranch(t, dir, env, "python3 scripts/book_shipment.py R-101 --carrier DHL; echo STATUS: ok", true)
	why := "none, the trial ran whole: the clean trial " + rs["clean"].ID + " did not complete with its world right"
	if r := rs[phantom]; !strings.HasPrefix(r.Branch, why) || bookings(logs[phantom], "R-101") == 0 || len(logs[phantom].Start.InitialState) != 0 {
		t.Errorf("branch %q (want %q...), R-101 booked %d times, initial state %v: want the trial whole",
			r.Branch, why, bookings(logs[phantom], "R-101"), logs[phantom].Start.InitialState)
	}
	if !strings.Contains(stdout, "branch: 0 fault trials started from their clean trial; 1 "+why) {
		t.Errorf("chaos run does not say the fault trial ran whole:\n%s", stdout)
	}

	path := filepath.Join(dir, "portal.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	one := strings.Replace(string(b), "units: [R-101, R-102]", "units: [R-101]", 1)
	if one == string(b) {
		t.Fatal("portal.yaml has no units: [R-101, R-102] line to change")
	}
	if err := os.WriteFile(path, []byte(one), 0o644); err != nil {
		t.Fatal(err)
	}
	res := testkit.Run(t, bin, env, hang, "run", path, "--branch", "--dry-run")
	if res.Code != 0 || !strings.Contains(res.Stdout, "branch: none, the fault trials run whole: --branch needs a task of two units or more") {
		t.Errorf("chaos run --branch --dry-run on one unit: exit %d\nstdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
	}
}

// BenchmarkBranch: the fault trial's time with and without --branch, in the same run, on
// the portal grown to six orders (R-101..R-106) whose agent takes a second per booking
// (standing in for a long unit): branched, the fault trial repeats only the last one.
// go test ./tests/shim -run XXX -bench BenchmarkBranch -benchtime 1x
func BenchmarkBranch(b *testing.B) {
	dir, _, env := portal(b)
	orders := []string{"R-101", "R-102", "R-103", "R-104", "R-105", "R-106"}
	path := filepath.Join(dir, "portal.yaml")
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	checks := ""
	for _, o := range orders {
		checks += "  - key: shipment/" + o + "\n    equals: DHL\n"
	}
	s := strings.Replace(string(raw), "units: [R-101, R-102]", "units: ["+strings.Join(orders, ", ")+"]", 1)
	s = strings.Replace(s, "  - key: shipment/R-101\n    equals: DHL\n  - key: shipment/R-102\n    equals: DHL\n", checks, 1)
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		b.Fatal(err)
	}
	agent := `skip=$(printf '%s\n' "$1" | sed -n 's/^Already done, do not redo: //p' | tr ',' ' ')
for o in ` + strings.Join(orders, " ") + `; do
	case " $skip " in *" $o "*) continue ;; esac
	sleep 1; python3 scripts/book_shipment.py "$o" --carrier DHL >/dev/null 2>&1
	echo "$o: VERIFIED"
done
echo "STATUS: ok"
`
	if err := os.WriteFile(filepath.Join(dir, "agents", "many.sh"), []byte(agent), 0o755); err != nil {
		b.Fatal(err)
	}
	const lastLost = "phantom_success@book_shipment#6" // R-106's booking, where the fault trial starts
	var whole, branched time.Duration
	for b.Loop() {
		_, rs, _ := runBranchOf(b, dir, env, "sh agents/many.sh {task}", lastLost, false)
		whole += rs[lastLost].Duration
		_, rs, logs := runBranchOf(b, dir, env, "sh agents/many.sh {task}", lastLost, true)
		if rs[lastLost].Branch == "" || strings.HasPrefix(rs[lastLost].Branch, "none") || bookings(logs[lastLost], "R-101") != 0 {
			b.Fatalf("the fault trial did not branch: %q", rs[lastLost].Branch)
		}
		branched += rs[lastLost].Duration
	}
	n := float64(b.N)
	b.ReportMetric(whole.Seconds()/n, "s/whole-fault-trial")
	b.ReportMetric(branched.Seconds()/n, "s/branched-fault-trial")
	b.ReportMetric(whole.Seconds()/branched.Seconds(), "x-faster")
}

// sameVerdicts checks that a --branch run and the same run whole gave every trial the
// same verdict, unit by unit, and returns the branched run's trials that started from
// their clean trial.
func sameVerdicts(t *testing.T, name string, whole, branched map[string]run.TrialResult) []string {
	t.Helper()
	if len(whole) != len(branched) {
		t.Errorf("%s: %d trials whole, %d branched", name, len(whole), len(branched))
	}
	var from []string
	for c, w := range whole {
		b, ok := branched[c]
		if !ok {
			t.Errorf("%s %s: no such trial in the branched run", name, c)
			continue
		}
		if strings.HasPrefix(b.Branch, "from ") {
			from = append(from, c)
		}
		if b.Verdict != w.Verdict {
			t.Errorf("%s %s: %s branched (%s; branch %s), %s whole (%s)", name, c, b.Verdict, b.VerdictWhy, b.Branch, w.Verdict, w.VerdictWhy)
			continue
		}
		for i := range w.Units {
			if i >= len(b.Units) || b.Units[i].Unit != w.Units[i].Unit || b.Units[i].Verdict != w.Units[i].Verdict {
				t.Errorf("%s %s: units %+v branched, %+v whole", name, c, b.Units, w.Units)
				break
			}
		}
	}
	slices.Sort(from)
	return from
}

// TestPortalBranchSameVerdicts: chaos run --branch gives the verdicts the same run gives
// whole, trial by trial (verdicts.json), on the portal example with every condition it
// plans, for the blind and the verifying agent. A branched trial's fault positions
// continue from the clean trial's calls before the branch point: session_drop and
// context_switch (from the 2nd call to book_shipment) fire on R-102's booking, as they
// do whole; a fault on the first booking would fire before the branch point, so its
// trial runs whole and says why.
func TestPortalBranchSameVerdicts(t *testing.T) {
	dir, _, env := portal(t)
	path := filepath.Join(dir, "portal.yaml")
	for _, agent := range []string{"sh agents/blind.sh {task}", "sh agents/verifying.sh"} {
		_, whole, _ := chaosRun(t, env, 1, byCondition, path, "--", agent)
		_, branched, _ := chaosRun(t, env, 1, byCondition, path, "--branch", "--", agent)
		from := sameVerdicts(t, agent, whole, branched)
		for _, c := range []string{"session_drop@book_shipment", "context_switch@book_shipment"} {
			if !slices.Contains(from, c) {
				t.Errorf("%s %s: branch %q, want it started from the clean trial", agent, c, branched[c].Branch)
			}
			if v := whole[c].Verdict; v == report.NotTriggered || v == report.Correct {
				t.Errorf("%s %s whole: %s, want the fault to count", agent, c, v)
			}
		}
		why := "phantom_success@book_shipment fires at the first call to book_shipment, before the branch point"
		if b := branched["phantom_success@book_shipment"].Branch; !strings.Contains(b, why) {
			t.Errorf("%s phantom_success@book_shipment: branch %q, want it whole because %s", agent, b, why)
		}
		t.Logf("%s: branched %v", agent, from)
	}
}

// TestBranchLaterWrites: on the portal grown to three orders, faults on the 2nd and the
// 3rd booking give the same verdicts branched and whole: the 3rd booking is R-103's,
// where the branched trial starts, and its fault fires there; the 2nd is before the
// branch point, and that trial runs whole.
func TestBranchLaterWrites(t *testing.T) {
	dir, _, env := portal(t)
	orders := []string{"R-101", "R-102", "R-103"}
	path := filepath.Join(dir, "portal.yaml")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(raw), "units: [R-101, R-102]", "units: [R-101, R-102, R-103]", 1)
	s = strings.Replace(s, "  - key: shipment/R-102\n    equals: DHL\n", "  - key: shipment/R-102\n    equals: DHL\n  - key: shipment/R-103\n    equals: DHL\n", 1)
	s += `conditions:
  - {id: lost-2nd, family: phantom_success, tool: book_shipment, at: 2}
  - {id: lost-3rd, family: phantom_success, tool: book_shipment, at: 3}
  - {id: failed-3rd, family: phantom_failure, tool: book_shipment, at: 3}
  - {id: moved-3rd, family: context_switch, tool: book_shipment, at: 3}
`
	if s == string(raw) || !strings.Contains(s, "R-103\n    equals") {
		t.Fatal("portal.yaml no longer has the lines this test grows")
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	agent := `skip=$(printf '%s\n' "$1" | sed -n 's/^Already done, do not redo: //p' | tr ',' ' ')
for o in ` + strings.Join(orders, " ") + `; do
	case " $skip " in *" $o "*) continue ;; esac
	python3 scripts/book_shipment.py "$o" --carrier DHL >/dev/null 2>&1 || python3 scripts/book_shipment.py "$o" --carrier DHL >/dev/null 2>&1
	echo "$o: VERIFIED"
done
echo "STATUS: ok"
`
	if err := os.WriteFile(filepath.Join(dir, "agents", "three.sh"), []byte(agent), 0o755); err != nil {
		t.Fatal(err)
	}
	_, whole, _ := chaosRun(t, env, 1, byCondition, path, "--", "sh agents/three.sh {task}")
	_, branched, _ := chaosRun(t, env, 1, byCondition, path, "--branch", "--", "sh agents/three.sh {task}")
	from := slices.DeleteFunc(sameVerdicts(t, "three orders", whole, branched), func(c string) bool {
		return strings.HasSuffix(c, "@get_shipment") // the agent never reads: not_triggered both ways
	})
	if want := []string{"failed-3rd", "lost-3rd", "moved-3rd"}; !slices.Equal(from, want) {
		t.Errorf("branched trials %v, want %v (lost-2nd runs whole)", from, want)
	}
	want := map[string]string{"clean": report.Correct, "lost-2nd": report.SilentWrong, "lost-3rd": report.SilentWrong, "failed-3rd": report.SilentWrong, "moved-3rd": report.SilentWrong}
	for c, v := range want {
		if whole[c].Verdict != v {
			t.Errorf("%s whole: %s (%s), want %s", c, whole[c].Verdict, whole[c].VerdictWhy, v)
		}
	}
}
