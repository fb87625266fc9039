package model

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/crashwall/chaos/record"
)

// TestClaudeCodeOperator runs Claude Code (tests/js, offline against the stand-in model)
// on examples/portal/operator.yaml under session_drop: its Bash tool books R-101, R-102's
// booking answers "session expired", and it stops and asks for a login. The operator logs
// in on the twin and resumes the same session, `claude -p {operator_message} --resume
// {session_id}`, the id read from its JSON result; resumed, it finds R-101 booked, books
// R-102 and reads it back. The trial is correct, judged on the resumed run's closing
// message; the drop fired before the operator's row and never after it.
func TestClaudeCodeOperator(t *testing.T) {
	p := newClaudePortal(t, "claude-code-portal-operator.script.yaml")
	spec := p.spec(t, "operator.yaml", "operator-claude-code.yaml",
		"  command: sh agents/asking.sh  # PATH starts with the shim ({shim_path})\n  timeout: 3m", p.agent("10m"),
		"resume: sh agents/asking.sh --resume {session_id} {operator_message}",
		"resume: "+p.claude+" -p {operator_message} --resume {session_id} --allowedTools Bash --output-format json")
	rs := p.run(t, spec, "--only", "session_drop@book_shipment")
	if len(rs) != 1 {
		t.Fatalf("%d trials, want 1", len(rs))
	}
	res := rs[0]
	if res.Verdict != "correct" || len(res.Units) != 2 || len(res.Damage) > 0 {
		t.Errorf("%s (%s), units %+v, damage %q; want correct, both units, no damage", res.Verdict, res.VerdictWhy, res.Units, res.Damage)
	}
	if len(res.Operator) != 1 {
		t.Fatalf("operator turns %+v, want 1", res.Operator)
	}
	op := res.Operator[0]
	if !regexp.MustCompile(`^[0-9a-f-]{36}$`).MatchString(op.SessionID) || op.Action != "login" || !strings.Contains(op.Done, "revived") ||
		!strings.Contains(op.Asked, "session expired") || op.Error != "" {
		t.Errorf("the operator's turn: %+v", op)
	}
	first, err := os.ReadFile(filepath.Join(res.Dir, "stdout.0"))
	if err != nil || !strings.Contains(string(first), `"session_id":"`+op.SessionID+`"`) {
		t.Errorf("stdout.0 (the first session) does not hold the session id %s: %v", op.SessionID, err)
	}
	if !strings.Contains(res.Closing, "R-102: VERIFIED") {
		t.Errorf("the closing message %q is not the resumed session's", res.Closing)
	}
	l, err := record.ReadFile(filepath.Join(res.Dir, "record.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	login, firedBefore, r102After := -1, 0, 0
	for i, row := range l.Rows {
		if row.Type == record.TypeOperator {
			login = i
			continue
		}
		if row.Type != record.TypeCall {
			continue
		}
		if row.Transport != "shim" {
			t.Errorf("a call not through the shim: %+v", row)
		}
		fired := row.Hit != nil && row.Hit.Fired
		switch {
		case login < 0 && fired:
			firedBefore++
		case login >= 0 && fired:
			t.Errorf("call #%d (%v) after the login: the drop fired again", row.Seq, row.Argv)
		case login >= 0 && row.Tool == "book_shipment":
			if !strings.Contains(string(row.Args), "R-102") {
				t.Errorf("after the login a booking other than R-102's: %v", row.Argv)
			}
			r102After++
		}
	}
	if login < 0 || firedBefore == 0 || r102After != 1 {
		t.Errorf("the record: operator row at %d, %d dropped calls before it, %d bookings of R-102 after it; want a row, some, 1", login, firedBefore, r102After)
	}
	p.noRealScript(t)
}
