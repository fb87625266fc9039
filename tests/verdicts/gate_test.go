package verdicts_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
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
	// The run folder says it too: summary.txt, junit.xml (a failed test case of the suite
	// "gates") and report.html.
	for file, wants := range map[string][]string{
		"summary.txt": {"\ngates (80% anytime-valid confidence sequence", "  silent_wrong<=5%: agent=blind phantom_success@update_ticket: silent_wrong 3/3, 80% confidence sequence [", "]: fail\n"},
		"junit.xml":   {`<testsuite name="gates"`, `<failure message="agent=blind phantom_success@update_ticket: silent_wrong 3/3`, `type="gate"`},
		"report.html": {`"gates":[{"gate":{"gate":"silent_wrong\u003c=5%"`, `"call":"fail"`},
	} {
		b, err := os.ReadFile(filepath.Join(out, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range wants {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s lacks %q", file, want)
			}
		}
	}

	_, stderr, code = chaos(t, append(args, "--dry-run", "--gate", "silent_wrng<=5%")...)
	if code != 1 || !strings.Contains(stderr, `unknown outcome "silent_wrng" (did you mean silent_wrong?)`) {
		t.Errorf("a misspelt gate: exit %d, %q; want 1 with a suggestion", code, stderr)
	}
}

// runAdaptive runs the demo's agents adaptively under the gate into out and returns the
// trials it spent and what --reps 10 would have.
func runAdaptive(t testing.TB, out string) (spent, fixed int) {
	stdout, stderr, code := chaos(t, "run", "examples/support-ticket.yaml", "--only", "clean,phantom_success@update_ticket",
		"--adaptive", "--gate", "silent_wrong<=5%", "--data-dir", filepath.Join(filepath.Dir(out), "data"), "--out", out)
	if code != 5 {
		t.Fatalf("exit %d, want 5 (the blind agent breaks the gate)\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "FAIL silent_wrong<=5%: agent=blind phantom_success@update_ticket") || strings.Contains(stdout, "FAIL silent_wrong<=5%: agent=verifying") {
		t.Errorf("the gate's calls:\n%s", stdout)
	}
	m := regexp.MustCompile(`(?m)^adaptive: (\d+) trials run, where --reps 10 runs (\d+) `).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("the run does not say how many trials it spent:\n%s", stdout)
	}
	return atoi(t, m[1]), atoi(t, m[2])
}

// BenchmarkAdaptive prints the trials the adaptive run spends on the gate's question and
// what --reps 10 spends on it (make bench).
func BenchmarkAdaptive(b *testing.B) {
	for range b.N {
		spent, fixed := runAdaptive(b, filepath.Join(b.TempDir(), "run"))
		b.ReportMetric(float64(spent), "trials-adaptive")
		b.ReportMetric(float64(fixed), "trials-reps10")
	}
}

// TestAdaptive: chaos run --adaptive with the demo's agents under the gate runs its trials
// in rounds and stops each condition when its question is answered: the blind agent fails
// the gate (exit 5) on its phantom-success trials, the verifying one does not, every clean
// trial a faulted trial is paired with was run, and the run spends fewer trials than
// --reps 10 (both counts printed, and logged here).
func TestAdaptive(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	spent, fixed := runAdaptive(t, out)
	t.Logf("adaptive: %d trials; --reps 10: %d", spent, fixed)
	if spent >= fixed {
		t.Errorf("the adaptive run spent %d trials, not fewer than --reps 10's %d", spent, fixed)
	}
	results := readResults(t, out)
	if len(results) != spent {
		t.Errorf("verdicts.json holds %d trials, the run says it ran %d", len(results), spent)
	}
	// Every faulted trial's seed has its clean trial in the same cell.
	clean := map[string]bool{}
	for _, r := range results {
		if r.Condition == "clean" {
			clean[fmt.Sprintf("%s/%d", r.Cell, r.Rep)] = true
		}
	}
	for _, r := range results {
		if r.Condition != "clean" && !clean[fmt.Sprintf("%s/%d", r.Cell, r.Rep)] {
			t.Errorf("trial %s has no clean trial of its seed to be paired with", r.ID)
		}
	}
}

func atoi(t testing.TB, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
