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
	if n := strings.Count(out, "\nagent="); n != 6 {
		t.Errorf("%d rows, want 6 (3 conditions x 2 arms):\n%s", n, out)
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
