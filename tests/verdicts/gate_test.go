package verdicts_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestGate: chaos run --gate 'silent_wrong<=5%' on the demo's agents fails the run with
// exit 5 where the evidence says the bar is broken (the blind agent, silent wrong in every
// phantom-success trial) and only there (the verifying agent passes); --gate-regression
// against a paired baseline of the same agents finds nothing worse. A gate naming no
// outcome the run knows is refused before anything runs.
func TestGate(t *testing.T) {
	args := []string{"run", "examples/support-ticket.yaml", "--only", "clean,phantom_success@update_ticket", "--reps", "3"}
	base := runExample(t, "examples/support-ticket.yaml", args[2:]...)

	out := filepath.Join(t.TempDir(), "run")
	stdout, stderr, code := chaos(t, append(args, "--data-dir", filepath.Join(t.TempDir(), "data"), "--out", out,
		"--gate", "silent_wrong<=5%", "--gate-regression", base, "--pair-with", base)...)
	if code != 5 {
		t.Fatalf("exit %d, want 5 (a gate failed)\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"FAIL silent_wrong<=5%: agent=blind phantom_success@update_ticket: silent_wrong 3/3, 80% confidence sequence [",
		"silent_wrong<=5%: 1 cell(s) x condition(s) failed",
		"regression against ",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the console lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "FAIL silent_wrong<=5%: agent=verifying") || strings.Contains(stdout, "FAIL regression") {
		t.Errorf("a gate failed where the evidence does not say so:\n%s", stdout)
	}
	if !strings.Contains(stderr, "1 gate(s) failed: silent_wrong<=5% on agent=blind phantom_success@update_ticket") {
		t.Errorf("the error does not name the gate and the cell: %q", stderr)
	}

	_, stderr, code = chaos(t, append(args, "--dry-run", "--gate", "silent_wrng<=5%")...)
	if code != 1 || !strings.Contains(stderr, `unknown outcome "silent_wrng" (did you mean silent_wrong?)`) {
		t.Errorf("a misspelt gate: exit %d, %q; want 1 with a suggestion", code, stderr)
	}
}
