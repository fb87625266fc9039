package run_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/tests/chaosbin"
	"github.com/crashwall/chaos/tests/testkit"
)

// TestREADMECommands runs the README's commands as a newcomer types them, from a folder of
// their own (the demo's run folder is relative to it): `chaos demo`, `chaos show` of the
// run id the demo printed, and `chaos faults` of the example, from the repository's root.
func TestREADMECommands(t *testing.T) {
	env := testkit.Env(t)
	home := t.TempDir()
	data := filepath.Join(t.TempDir(), "data")

	// The demo's 38 trials: a bound for a starved machine, not a speed requirement.
	const demoTimeout = 20 * time.Minute
	demo := testkit.RunIn(t, home, chaosBin, env, demoTimeout, "demo", "--data-dir", data)
	demo.MustSucceed(t, "chaos demo")
	id := runIDOf(t, demo.Stdout)
	folder := filepath.Join(home, "chaos-runs", "demo", id)
	if !strings.Contains(demo.Stdout, "run "+id+" -> "+folder+"\n") {
		t.Errorf("chaos demo does not name its run folder %s after the run id:\n%s", folder, demo.Stdout)
	}
	for _, f := range []string{"manifest.json", "summary.txt", "report.html", "verdicts.json"} {
		if !exists(filepath.Join(folder, f)) {
			t.Errorf("the demo's run folder %s has no %s", folder, f)
		}
	}
	var m struct {
		RunID string `json:"run_id"`
		Spec  struct {
			Path string `json:"path"`
		} `json:"spec"`
	}
	testkit.ReadJSON(t, filepath.Join(folder, "manifest.json"), &m)
	if m.RunID != id {
		t.Errorf("manifest.json: run_id %q, want the id the demo printed, %q", m.RunID, id)
	}
	// The spec the demo ran is kept with the run, not in a temporary folder it deletes.
	if want := filepath.Join(folder, "spec.yaml"); m.Spec.Path != want {
		t.Errorf("manifest.json: spec.path %q, want %q", m.Spec.Path, want)
	} else if b, err := os.ReadFile(want); err != nil || !strings.Contains(string(b), "name: support-ticket") {
		t.Errorf("the kept spec %s: %v %.40q", want, err, b)
	}

	show := testkit.RunIn(t, home, chaosBin, env, runTimeout, "show", id)
	show.MustSucceed(t, "chaos show "+id)
	if !regexp.MustCompile(`(?m)^run +` + regexp.QuoteMeta(id) + ` `).MatchString(show.Stdout) {
		t.Errorf("chaos show %s does not show that run:\n%s", id, show.Stdout)
	}

	faults := testkit.RunIn(t, chaosbin.Root(), chaosBin, env, runTimeout, "faults", "examples/support-ticket.yaml")
	faults.MustSucceed(t, "chaos faults examples/support-ticket.yaml")
	for _, c := range []string{"clean", "phantom_success@update_ticket"} {
		if !strings.Contains(faults.Stdout, c) {
			t.Errorf("chaos faults does not list %s:\n%s", c, faults.Stdout)
		}
	}
}
