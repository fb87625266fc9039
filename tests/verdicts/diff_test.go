package verdicts_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiff: two runs that share seeds are compared paired (McNemar, named); a run with
// other seeds is refused with exit 1 unless --unpaired, which names Fisher's exact test.
func TestDiff(t *testing.T) {
	only := []string{"--only", "clean,phantom_success@update_ticket,empty_success@update_ticket"}
	a := runExample(t, "examples/support-ticket.yaml", only...)
	b := runExample(t, "examples/support-ticket.yaml", only...)

	out, errOut, code := chaos(t, "diff", a, b)
	if code != 0 {
		t.Fatalf("paired diff exited %d: %s%s", code, out, errOut)
	}
	if !strings.Contains(out, "method: McNemar's exact test (paired on shared seeds), two-sided, alpha 0.05") {
		t.Errorf("the paired diff does not name its method:\n%s", out)
	}
	// The same agents on the same seeds: every condition comes out the same, p = 1.
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "agent=") {
			f := strings.Fields(line)
			if f[len(f)-1] != "same" || f[len(f)-2] != "1.000" {
				t.Errorf("want same with p 1.000: %q", line)
			}
		}
	}
	first, _, _ := strings.Cut(out, "\nevery verdict:")
	if n := strings.Count(first, "\nagent="); n != 6 {
		t.Errorf("%d silent-wrong rows, want 6 (3 conditions x 2 arms):\n%s", n, out)
	}
	if !strings.Contains(out, "\nchanged: nothing, at alpha 0.05\n") {
		t.Errorf("the diff of two identical runs does not say nothing changed:\n%s", out)
	}

	// Another seed: no trial pairs with a trial of run a.
	spec, err := os.ReadFile(filepath.Join(root, "examples/support-ticket.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "support-ticket.yaml")
	if err := os.WriteFile(other, []byte(strings.Replace(string(spec), "seed: 7", "seed: 8", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	c := runExample(t, other, only...)
	out, errOut, code = chaos(t, "diff", a, c)
	if code != 1 {
		t.Fatalf("diff of runs with other seeds exited %d, want 1: %s%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "the runs share no seeds, so they cannot be compared paired") || !strings.Contains(errOut, "--unpaired") {
		t.Errorf("the refusal does not say why and what to do: %q", errOut)
	}
	out, errOut, code = chaos(t, "diff", "--unpaired", a, c)
	if code != 0 {
		t.Fatalf("unpaired diff exited %d: %s%s", code, out, errOut)
	}
	if !strings.Contains(out, "method: Fisher's exact test (unpaired)") {
		t.Errorf("the unpaired diff does not name its method:\n%s", out)
	}
}

// TestDiffSeesEveryVerdict: run B's agent never reaches the wall, so none of its trials is
// scored and its silent-wrong rate cannot differ; the diff still pairs it with run A on the
// seeds they share, compares every verdict's share with McNemar, and lists what changed.
func TestDiffSeesEveryVerdict(t *testing.T) {
	only := []string{"--only", "clean", "--reps", "6"}
	a := runExample(t, "examples/support-ticket.yaml", only...)
	b := filepath.Join(t.TempDir(), "run")
	stdout, stderr, code := chaos(t, append([]string{"run", "examples/support-ticket.yaml", "--data-dir", filepath.Join(t.TempDir(), "data"), "--out", b}, append(only, "--", "true")...)...)
	if code != 4 {
		t.Fatalf("a run whose agent is `true` exited %d, want 4 (nothing scored)\n%s%s", code, stdout, stderr)
	}
	verdictB := ""
	for _, r := range readResults(t, b) {
		if verdictB != "" && r.Verdict != verdictB {
			t.Fatalf("run B's trials have verdicts %s and %s, want one", verdictB, r.Verdict)
		}
		verdictB = r.Verdict
	}
	out, errOut, code := chaos(t, "diff", a, b)
	if code != 0 {
		t.Fatalf("diff exited %d: %s%s", code, out, errOut)
	}
	_, verdicts, found := strings.Cut(out, "\nevery verdict:")
	if !found {
		t.Fatalf("the diff has no table of every verdict:\n%s", out)
	}
	for _, arm := range []string{"agent=blind", "agent=verifying"} {
		for _, want := range []string{
			arm + " clean " + verdictB + ": more (0/6 = 0% [0%, 21%] -> 6/6 = 100% [79%, 100%], p 0.031)",
			arm + " clean correct: fewer (6/6 = 100% [79%, 100%] -> 0/6 = 0% [0%, 21%], p 0.031)",
		} {
			if !strings.Contains(verdicts, "\n  "+want+"\n") {
				t.Errorf("the diff does not list %q as changed:\n%s", want, out)
			}
		}
	}
}
