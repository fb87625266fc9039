package verdicts_test

import (
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/tests/testkit"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from this run's verdicts")

// goldenTrial is what a golden file keeps of a trial: what must not change when the code
// that runs and judges trials is moved about.
type goldenTrial struct {
	ID      string   `json:"id"`
	Seed    int64    `json:"seed"`
	Outcome string   `json:"outcome"`
	Verdict string   `json:"verdict"`
	Units   []string `json:"units,omitempty"` // unit=verdict, where the task has units
}

// TestGoldenVerdicts runs the shipped examples that run offline (the reference agents on
// examples/support-ticket.yaml and on the Ajantik scenario; the portal's agents, blind,
// verifying and stray, behind the shim, its adapters and its operator) and compares every trial's id, seed,
// outcome and verdict (and per-unit verdicts) with testdata/golden/<name>.json. Run with
// -update to rewrite the golden files from this run.
func TestGoldenVerdicts(t *testing.T) {
	ajantik := "'{chaos}' agent scripted --transport stdio --wall-command {wall} --spec {spec} --style "
	runs := []struct {
		name string
		dir  func(t *testing.T) string
	}{
		{"support-ticket", func(t *testing.T) string { return exampleRun(t) }},
		{"ajantik-blind", func(t *testing.T) string {
			return runExample(t, "examples/ajantik-support-ticket.yaml", "--concurrency", "8", "--", ajantik+"blind")
		}},
		{"ajantik-verifying", func(t *testing.T) string {
			return runExample(t, "examples/ajantik-support-ticket.yaml", "--concurrency", "8", "--", ajantik+"verifying")
		}},
		{"portal", func(t *testing.T) string { return runPortalExample(t, "portal.yaml") }},
		{"portal-blind", func(t *testing.T) string { return runPortalExample(t, "portal.yaml", "--", "sh agents/blind.sh") }},
		{"portal-stray", func(t *testing.T) string {
			return runPortalExample(t, "portal.yaml", "--", "sh agents/stray.sh ORIGINAL")
		}},
		{"portal-adapter", func(t *testing.T) string { return runPortalExample(t, "adapter.yaml") }},
		{"portal-operator", func(t *testing.T) string { return runPortalExample(t, "operator.yaml") }},
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			got := goldenOf(readResults(t, r.dir(t)))
			path := filepath.Join("testdata", "golden", r.name+".json")
			if *update {
				b, err := json.MarshalIndent(got, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			var want []goldenTrial
			testkit.ReadJSON(t, path, &want)
			wantByID := map[string]goldenTrial{}
			for _, w := range want {
				wantByID[w.ID] = w
			}
			for _, g := range got {
				w, ok := wantByID[g.ID]
				if !ok {
					t.Errorf("trial %s is not in %s", g.ID, path)
					continue
				}
				delete(wantByID, g.ID)
				if g.Seed != w.Seed || g.Outcome != w.Outcome || g.Verdict != w.Verdict || !slices.Equal(g.Units, w.Units) {
					t.Errorf("trial %s: got seed %d, %s, %s, units %v; golden seed %d, %s, %s, units %v",
						g.ID, g.Seed, g.Outcome, g.Verdict, g.Units, w.Seed, w.Outcome, w.Verdict, w.Units)
				}
			}
			for id := range wantByID {
				t.Errorf("trial %s of %s did not run", id, path)
			}
		})
	}
}

// goldenOf keeps the golden fields of each trial, sorted by id.
func goldenOf(rs []run.TrialResult) []goldenTrial {
	out := make([]goldenTrial, 0, len(rs))
	for _, r := range rs {
		g := goldenTrial{ID: r.ID, Seed: r.Seed, Outcome: r.Outcome, Verdict: r.Verdict}
		for _, u := range r.Units {
			g.Units = append(g.Units, u.Unit+"="+u.Verdict)
		}
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b goldenTrial) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// runPortalExample runs examples/portal/<name> as it is, from a copy (the original
// project the shim snapshots), with its own agent or the one after "--" in extra, and
// returns the run folder. ORIGINAL in extra is the copy's folder. A run that
// found a silent wrong exits 1.
func runPortalExample(t *testing.T, name string, extra ...string) string {
	t.Helper()
	env, tmp := testkit.EnvDir(t)
	dir := filepath.Join(tmp, "portal")
	if out, err := exec.Command("cp", "-R", filepath.Join(root, "examples", "portal"), dir).CombinedOutput(); err != nil {
		t.Fatalf("copy the example: %v: %s", err, out)
	}
	out := filepath.Join(tmp, "run")
	for i := range extra {
		extra[i] = strings.ReplaceAll(extra[i], "ORIGINAL", dir)
	}
	res := testkit.Run(t, bin, append(env, "HOME="+tmp), 15*time.Minute, append([]string{"run", filepath.Join(dir, name), "--out", out, "--concurrency", "4"}, extra...)...)
	if res.Code != 0 && res.Code != 1 {
		t.Fatalf("chaos run %s: exit %d\nstdout:\n%s\nstderr:\n%s", name, res.Code, res.Stdout, res.Stderr)
	}
	return out
}
