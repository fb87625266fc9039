package model

import (
	"path/filepath"
	"testing"

	"github.com/crashwall/chaos/record"
)

// TestClaudeCodeShim runs Claude Code (tests/js, offline against the stand-in model) on
// the portal example's skill: its Bash tool runs the project's scripts, which the script
// shim (docs/shim.md) answers from the twin. It is right on clean and on phantom success
// (it reads back, sees the booking missing, books again); every script call went through
// the shim, and the real scripts never ran (their canary).
func TestClaudeCodeShim(t *testing.T) {
	p := newClaudePortal(t, "claude-code-portal.script.yaml")
	spec := p.spec(t, "portal.yaml", "portal-claude-code.yaml",
		"  command: sh agents/verifying.sh  # PATH starts with the shim ({shim_path})\n  timeout: 2m", p.agent("5m"))
	rs := p.run(t, spec, "--only", "clean,phantom_success@book_shipment", "--concurrency", "2")
	if len(rs) != 2 {
		t.Fatalf("%d trials, want 2", len(rs))
	}
	for _, res := range rs {
		if res.Verdict != "correct" || len(res.Units) != 2 {
			t.Errorf("%s: %s (%s), units %+v; want correct, both units", res.Condition, res.Verdict, res.VerdictWhy, res.Units)
		}
		l, err := record.ReadFile(filepath.Join(res.Dir, "record.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		books, fired := 0, 0
		for _, row := range l.Calls() {
			if row.Transport != "shim" {
				t.Errorf("%s: a call not through the shim: %+v", res.Condition, row)
			}
			if row.Tool == "book_shipment" {
				books++
			}
			if row.Hit != nil && row.Hit.Fired {
				fired++
			}
		}
		// Clean: one booking an order; phantom success: R-101 booked again after its read-back.
		want := map[string]int{"clean": 2, "phantom_success@book_shipment": 3}[res.Condition]
		if books != want || (res.Condition != "clean") != (fired == 1) {
			t.Errorf("%s: %d bookings, %d fired; want %d bookings and the fault fired once when armed", res.Condition, books, fired, want)
		}
	}
	p.noRealScript(t)
}
