package run_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/tests/testkit"
)

// TestOneDataDir runs several chaos runs on one data directory, each with its embedded
// server and worker (no chaos server):
//
//   - two runs started at once both finish (the second keeps its history beside the
//     first's instead of failing on the data directory's lock);
//   - a run whose chaos run was killed (SIGKILL) is not picked up by an unrelated run on
//     the same data directory (each embedded run has its own task queue), chaos runs
//     lists it as stopped with the command that resumes it, chaos abort says nothing
//     will happen until then, and chaos resume finishes it, every trial once.
func TestOneDataDir(t *testing.T) {
	env := testkit.Env(t)
	specPath := writeOverheadSpec(t)
	ids := func(n int) []string {
		var ids []string
		for rep := 1; rep <= n; rep++ {
			ids = append(ids, spec.TrialID("main", "clean", rep))
		}
		return ids
	}
	allCompleted := func(t *testing.T, out string, n int) {
		t.Helper()
		for id, r := range readVerdicts(t, out, ids(n)) {
			if r.Outcome != run.OutcomeCompleted {
				t.Errorf("%s: trial %s: outcome %q (%s), want completed", out, id, r.Outcome, r.Reason)
			}
		}
	}

	t.Run("two runs at once", func(t *testing.T) {
		data := t.TempDir()
		outA, outB := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
		a := startChaos(t, env, "run", specPath, "--data-dir", data, "--out", outA, "--only", "clean", "--reps", "3")
		b := startChaos(t, env, "run", specPath, "--data-dir", data, "--out", outB, "--only", "clean", "--reps", "3")
		for _, p := range []*testkit.Proc{a, b} {
			// The agent (true) never meets the wall: no trial is scored, so exit 4.
			if code := p.Wait(t, runTimeout); code != 4 {
				t.Fatalf("%s: exit code %d, want 4\nstdout:\n%s\nstderr:\n%s", p.Name, code, p.Stdout, p.Stderr)
			}
		}
		allCompleted(t, outA, 3)
		allCompleted(t, outB, 3)
	})

	t.Run("an orphan is left alone, then resumed", func(t *testing.T) {
		data, tmp := t.TempDir(), t.TempDir()
		outA, outB := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
		// A's agent blocks the first time it runs and exits at once after.
		flagFile := filepath.Join(tmp, "started")
		agent := fmt.Sprintf("if [ -e %s ]; then true; else touch %s; exec sleep 300; fi", spec.ShellQuote(flagFile), spec.ShellQuote(flagFile))
		a := startChaos(t, env, "run", specPath, "--data-dir", data, "--out", outA, "--only", "clean", "--reps", "1", "--", agent)
		runA := runIDOf(t, a.WaitStdout(t, runLine, testkit.StartTimeout)[0])
		testkit.WaitFor(t, runTimeout, "run A's agent to start", func() bool { return exists(flagFile) })
		a.Kill()

		b := runChaos(t, env, runTimeout, "run", specPath, "--data-dir", data, "--out", outB, "--only", "clean", "--reps", "2")
		if b.Code != 4 { // its agent (true) never meets the wall: no trial is scored
			t.Fatalf("chaos run B: exit code %d, want 4\nstdout:\n%s\nstderr:\n%s", b.Code, b.Stdout, b.Stderr)
		}
		allCompleted(t, outB, 2)
		resultA := filepath.Join(outA, "trials", "main", "clean", "1", "result.json")
		if exists(resultA) {
			t.Fatalf("run B's worker ran run A's trial: %s exists", resultA)
		}

		// While nothing holds the data directory, chaos runs and abort start its server.
		runs := runChaos(t, env, time.Minute, "runs", "--data-dir", data)
		runs.MustSucceed(t, "chaos runs")
		want := "chaos resume " + runA
		if line := lineWith(runs.Stdout, runA); !strings.Contains(line, "stopped") || !strings.Contains(line, want) {
			t.Errorf("chaos runs does not list run A as stopped with %q:\n%s", want, runs.Stdout)
		}

		res := runChaos(t, env, runTimeout, "resume", runA, "--data-dir", data)
		res.MustSucceed(t, "chaos resume")
		allCompleted(t, outA, 1)
		if !strings.Contains(res.Stdout, "1 trials") {
			t.Errorf("chaos resume does not report the run's result:\n%s", res.Stdout)
		}
	})
}

// lineWith is the first line of s that contains sub.
func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}
