package shim_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/tests/testkit"
)

// runSpecIn runs the spec file in dir (the agent after -- when given) with the conditions
// only, and returns the trials' results by cell and condition ("main/clean") and their
// records.
func runSpecIn(t *testing.T, dir, file string, env []string, agent string, only ...string) (map[string]run.TrialResult, map[string]*record.Log) {
	t.Helper()
	flags := []string{"--only", strings.Join(only, ",")}
	if agent != "" {
		flags = append(flags, "--", agent)
	}
	_, rs, logs := chaosRun(t, env, 1, func(r run.TrialResult) string { return r.Cell + "/" + r.Condition }, filepath.Join(dir, file), flags...) // 1: a silent wrong was found
	return rs, logs
}

// operatorRows are the record's operator turns, with their places among the rows.
func operatorRows(l *record.Log) (rows []record.Operator, at []int) {
	for i, r := range l.Rows {
		if r.Type == record.TypeOperator && r.Operator != nil {
			rows, at = append(rows, *r.Operator), append(at, i)
		}
	}
	return rows, at
}

// TestPortalOperator: under session_drop the asking agent stops and asks for a login
// FAILED, the session expired); the operator of examples/portal/operator.yaml logs
// in on the twin, which revives the session, and resumes it with its reply: the resumed
// agent books R-102 and the trial is correct, the drop never fires after the login, and
// the turn is in the record and result.json. Without the operator (portal.yaml, the same
// agent) the trial is reported_honestly and R-102 is not booked. On clean the operator's
// rule (session: dropped) does not match and the agent is not resumed.
func TestPortalOperator(t *testing.T) {
	dir, _, env := portal(t)
	const drop = "session_drop@book_shipment"
	rs, logs := runSpecIn(t, dir, "operator.yaml", env, "", "clean", drop)
	r, l := rs["main/"+drop], logs["main/"+drop]
	if r.Verdict != report.Correct {
		t.Errorf("with the operator: %s (%s), want correct", r.Verdict, r.VerdictWhy)
	}
	checkUnits(t, r, report.Correct, report.Correct)
	if len(r.Damage) > 0 {
		t.Errorf("with the operator: damage %q, want none (R-101 read back, not booked again)", r.Damage)
	}
	turns, at := operatorRows(l)
	if len(turns) != 1 {
		t.Fatalf("with the operator: %d operator turns in the record, want 1", len(turns))
	}
	op := turns[0]
	if op.Turn != 1 || op.Rule != 1 || op.Action != "login" || !strings.Contains(op.Done, "revived") ||
		op.Said != "I logged in to the portal again; please carry on." || !strings.Contains(op.Asked, "R-102: FAILED (the portal session expired") ||
		!regexp.MustCompile(`^portal-[0-9]+$`).MatchString(op.SessionID) || op.Error != "" {
		t.Errorf("the operator's turn: %+v", op)
	}
	if len(r.Operator) != 1 || r.Operator[0] != op {
		t.Errorf("result.json's operator turns %+v, want the record's %+v", r.Operator, op)
	}
	// The record: the drop fired before the login and never after it; R-102 was booked
	// after it, through the shim, exit 0.
	firedBefore, bookedAfter := 0, false
	for i, row := range l.Rows {
		if row.Type != record.TypeCall {
			continue
		}
		fired := row.Hit != nil && row.Hit.Fired
		if i < at[0] && fired {
			firedBefore++
		}
		if i > at[0] && fired {
			t.Errorf("call #%d (%s %v) after the login: the drop fired again", row.Seq, row.Tool, row.Argv)
		}
		if i > at[0] && row.Tool == "book_shipment" && strings.Contains(string(row.Args), "R-102") && row.Exit != nil && *row.Exit == 0 {
			bookedAfter = true
		}
	}
	if firedBefore == 0 || !bookedAfter {
		t.Errorf("the record: %d dropped calls before the login (want some), R-102 booked after it: %v", firedBefore, bookedAfter)
	}
	// The first run's output is kept; the last run's closing message is the trial's.
	first, err := os.ReadFile(filepath.Join(r.Dir, "stdout.0"))
	if err != nil || !strings.Contains(string(first), "STATUS: failed") {
		t.Errorf("stdout.0 (the first run): %q, %v", first, err)
	}
	if !strings.Contains(r.Closing, "R-102: VERIFIED") || !strings.Contains(r.Closing, "STATUS: ok") {
		t.Errorf("the closing message %q is not the resumed run's", r.Closing)
	}
	if c := rs["main/clean"]; c.Verdict != report.Correct || len(c.Operator) != 0 {
		t.Errorf("clean: %s, operator turns %+v; want correct and none", c.Verdict, c.Operator)
	}
	if turns, _ := operatorRows(logs["main/clean"]); len(turns) != 0 {
		t.Errorf("clean: operator rows %+v in the record", turns)
	}

	// The same agent without an operator: it reports the expired session honestly.
	rs, logs = runSpecIn(t, dir, "portal.yaml", env, "sh agents/asking.sh", drop)
	r = rs["main/"+drop]
	if r.Verdict != report.ReportedHonestly {
		t.Errorf("without the operator: %s (%s), want reported_honestly", r.Verdict, r.VerdictWhy)
	}
	checkUnits(t, r, report.Correct, report.ReportedHonestly)
	if turns, _ := operatorRows(logs["main/"+drop]); len(turns) != 0 || len(r.Operator) != 0 {
		t.Errorf("without the operator: operator turns %+v", turns)
	}
	if end := logs["main/"+drop].End; end == nil || end.FinalState["shipment/R-102"] != nil {
		t.Errorf("without the operator: R-102 was booked (%v)", end)
	}
}

// TestOperatorHostile: what the agent says and the session id it prints are hostile
// input; the operator's reply and the session id reach the resume command as values,
// never as shell text. The agent prints a session id full of shell code and the spec's
// reply holds some too: nothing of it runs, and the resumed agent gets both exactly, as
// one argument each.
func TestOperatorHostile(t *testing.T) {
	dir, _, env := portal(t)
	probe := t.TempDir()
	id := `x'$(touch ` + probe + `/pwned-1)'` + "`touch " + probe + "/pwned-2`;touch " + probe + "/pwned-3 #"
	reply := `Logged in; go on $(touch ` + probe + `/pwned-4); touch ` + probe + "/pwned-5 `touch " + probe + "/pwned-6` '\"; touch " + probe + "/pwned-7"
	testkit.WriteFile(t, filepath.Join(dir, "agents", "hostile.sh"), `#!/bin/sh
if [ "$1" = --resume ]; then
	echo "$#" >"$OPERATOR_PROBE/argc"
	printf '%s' "$2" >"$OPERATOR_PROBE/id"
	printf '%s' "$3" >"$OPERATOR_PROBE/message"
	python3 scripts/get_shipment.py R-101 >/dev/null
	echo "resumed"
	echo "STATUS: failed"
	exit 0
fi
python3 scripts/get_shipment.py R-101 >/dev/null
printf '{"session_id": "%s"}\n' "$HOSTILE_ID"
echo "The portal session expired; please log in. $(printf '%s' '$(touch $OPERATOR_PROBE/pwned-8)')"
echo "STATUS: failed"
`)
	y, err := os.ReadFile(filepath.Join(dir, "operator.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(y), "command: sh agents/asking.sh", "command: sh agents/hostile.sh", 1)
	s = strings.Replace(s, "resume: sh agents/asking.sh --resume {session_id} {operator_message}", "resume: sh agents/hostile.sh --resume {session_id} {operator_message}", 1)
	s = regexp.MustCompile(`(?s)  rules:.*?\nscripts:`).ReplaceAllString(s, "  rules:\n    - when: session expired\n      reply: '"+strings.ReplaceAll(reply, "'", "''")+"'\nscripts:")
	testkit.WriteFile(t, filepath.Join(dir, "hostile.yaml"), s)
	env = append(env, "OPERATOR_PROBE="+probe, "HOSTILE_ID="+id)

	rs, _ := runSpecIn(t, dir, "hostile.yaml", env, "", "clean")
	r := rs["main/clean"]
	if len(r.Operator) != 1 || r.Operator[0].SessionID != id || r.Operator[0].Said != reply || r.Operator[0].Error != "" {
		t.Fatalf("the operator's turn %+v (%s: %s), want one with the id %q", r.Operator, r.Outcome, r.Reason, id)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(probe, name))
		if err != nil {
			t.Errorf("the resumed agent wrote no %s: %v", name, err)
		}
		return string(b)
	}
	if got := strings.TrimSpace(read("argc")); got != "3" {
		t.Errorf("the resumed agent got %s arguments, want 3 (--resume, the id, the message)", got)
	}
	if got := read("id"); got != id {
		t.Errorf("the resumed agent got the session id %q, want %q", got, id)
	}
	if got := read("message"); got != reply {
		t.Errorf("the resumed agent got the message %q, want %q", got, reply)
	}
	pwned, _ := filepath.Glob(filepath.Join(probe, "pwned-*"))
	if len(pwned) > 0 {
		t.Errorf("hostile text ran as shell: %v", pwned)
	}
}

// TestPortalTaskUnits: units given per task of a tasks list are judged per unit as the
// top-level ones are: under phantom success the blind agent's first booking is
// lost, so in the task of two units R-101 is silent_wrong and R-102 correct, and in the
// task of R-101 alone its one unit is silent_wrong; each trial's verdict is its units'
// roll-up.
func TestPortalTaskUnits(t *testing.T) {
	dir, _, env := portal(t)
	y, err := os.ReadFile(filepath.Join(dir, "portal.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(y)
	top := regexp.MustCompile(`(?s)\ntask: \|.*?\nagent:`)
	s = top.ReplaceAllString(s, "\nagent:")
	s = regexp.MustCompile(`(?s)\nunits: .*?\nclaim:`).ReplaceAllString(s, `
tasks:
  - id: both
    prompt: Book DHL shipments for orders R-101 and R-102 following SKILL.md.
    units: [R-101, R-102]
    state_checks:
      - {key: shipment/R-101, equals: DHL}
      - {key: shipment/R-102, equals: DHL}
  - id: first
    prompt: Book a DHL shipment for order R-101 following SKILL.md.
    units: [R-101]
    state_checks:
      - {key: shipment/R-101, equals: DHL}
claim:`)
	if strings.Contains(s, "\ntask:") || !strings.Contains(s, "\ntasks:") {
		t.Fatalf("the spec with tasks was not made:\n%s", s)
	}
	testkit.WriteFile(t, filepath.Join(dir, "tasks.yaml"), s)
	const ps = "phantom_success@book_shipment"
	rs, _ := runSpecIn(t, dir, "tasks.yaml", env, "sh agents/blind.sh", ps)
	both, first := rs["task=both/"+ps], rs["task=first/"+ps]
	checkUnits(t, both, report.SilentWrong, report.Correct)
	if both.Verdict != report.SilentWrong {
		t.Errorf("task both: %s (%s), want silent_wrong", both.Verdict, both.VerdictWhy)
	}
	if len(first.Units) != 1 || first.Units[0].Unit != "R-101" || first.Units[0].Verdict != report.SilentWrong || len(first.Units[0].Checks) != 1 {
		t.Errorf("task first: units %+v, want R-101 alone, silent_wrong, with its one check", first.Units)
	}
	if first.Verdict != report.SilentWrong || !strings.Contains(first.VerdictWhy, "units: R-101 silent_wrong") {
		t.Errorf("task first: %s (%s), want silent_wrong from its unit", first.Verdict, first.VerdictWhy)
	}
}
