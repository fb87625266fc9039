package model

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashwall/chaos/tests/testkit"
)

// blindRuns is what the tests of a real agent client share (Claude Code, Codex, the
// Agents SDK agent): a spec that runs the client against the stand-in model playing a
// blind agent, written again for each case with its own changes, and the runs of it
// into the test's own folders.
type blindRuns struct {
	text      string // the spec as read
	dir, data string // the specs and run folders; the embedded server's data
	env       []string
}

// clientRuns is the set-up of a test of a real client from tests/js (name: its command in
// node_modules/.bin) as the agent of an example: the client's path, the stand-in model
// playing script (in tests/model/testdata) and its URL, and the example's runs.
func clientRuns(t *testing.T, name, script, example string) (bin, standin string, runs *blindRuns) {
	t.Helper()
	bin = filepath.Join(jsDir, "node_modules", ".bin", name)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s is not installed in tests/js (npm ci --prefix tests/js): %v", name, err)
	}
	standin = startStandin(t, filepath.Join(repoRoot, "tests", "model", "testdata", script))
	return bin, standin, newBlindRuns(t, filepath.Join(repoRoot, "examples", example), testEnv(t))
}

// newBlindRuns reads the spec at path for runs with the environment env.
func newBlindRuns(t *testing.T, path string, env []string) *blindRuns {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return &blindRuns{text: string(b), dir: t.TempDir(), data: t.TempDir(), env: env}
}

// home makes a home folder of the case's own: no login, no settings of the machine's user.
func (b *blindRuns) home(t *testing.T, name string) string {
	t.Helper()
	home := filepath.Join(b.dir, "home-"+name)
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	return home
}

// spec writes the spec with each pair of replace (old, new) made once, as name.yaml, and
// returns its path; an old text the spec does not hold fails the test, so that a change
// of the example cannot leave a case running something other than it says.
func (b *blindRuns) spec(t *testing.T, name string, replace ...string) string {
	t.Helper()
	text := b.text
	for i := 0; i+1 < len(replace); i += 2 {
		if !strings.Contains(text, replace[i]) {
			t.Fatalf("the spec has no %q to replace", replace[i])
		}
		text = strings.Replace(text, replace[i], replace[i+1], 1)
	}
	p := filepath.Join(b.dir, name+".yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// wantBlind runs the spec and wants it to exit 0 with clean correct and phantom_success
// on update_ticket silent_wrong; it returns the run folder and the run.
func (b *blindRuns) wantBlind(t *testing.T, spec string, args ...string) (string, testkit.Result) {
	t.Helper()
	out := filepath.Join(b.dir, "run-"+strings.TrimSuffix(filepath.Base(spec), ".yaml"))
	r := runChaos(t, b.env, runTimeout, append([]string{"run", spec, "--data-dir", b.data, "--out", out}, args...)...)
	r.MustSucceed(t, "chaos run")
	got := trialVerdicts(t, out)
	if len(got) != 2 || got["clean"][0] != "correct" || got["phantom_success@update_ticket"][0] != "silent_wrong" {
		t.Errorf("verdicts %v, want clean correct and phantom_success@update_ticket silent_wrong\n%s", got, r.Stdout)
	}
	return out, r
}

// wantUnscored runs the spec's clean condition and wants no trial scored (exit 4), its
// verdict no_verdict for the reason unreached, and the console saying each of says; it
// returns the run folder.
func (b *blindRuns) wantUnscored(t *testing.T, spec, unreached string, says ...string) string {
	t.Helper()
	out := filepath.Join(b.dir, "run-"+strings.TrimSuffix(filepath.Base(spec), ".yaml"))
	r := runChaos(t, b.env, runTimeout, "run", spec, "--only", "clean", "--reps", "1", "--data-dir", b.data, "--out", out)
	if r.Code != 4 {
		t.Fatalf("exit %d, want 4 (no trial scored)\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if got := trialVerdicts(t, out)["clean"]; got[0] != "no_verdict" || got[1] != unreached {
		t.Errorf("clean: %v, want no_verdict, %s", got, unreached)
	}
	for _, want := range append(says, "no trial could be scored") {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("the console does not say %q:\n%s", want, r.Stdout)
		}
	}
	return out
}

// trialVerdicts is the verdict and the unreached reason of each condition's trial, from a
// run's verdicts.json.
func trialVerdicts(t *testing.T, out string) map[string][]string {
	t.Helper()
	var trials []struct{ Condition, Verdict, Unreached string }
	testkit.ReadJSON(t, filepath.Join(out, "verdicts.json"), &trials)
	got := map[string][]string{}
	for _, r := range trials {
		got[r.Condition] = []string{r.Verdict, r.Unreached}
	}
	return got
}
