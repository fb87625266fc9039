package store_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/store/pgtest"
	"github.com/crashwall/chaos/tests/testkit"
)

// TestTwoWorkersShareARun: two chaos workers, standing for two machines (each its own
// sandboxes and data), share a run of chaos server on Temporal's PostgreSQL, four trials
// at once of two slots each; one is SIGKILLed while its trials run, and they finish on
// the other: every trial recorded once, completed, the killed worker's run again there.
//
//	chaos server --db postgres --no-worker ── worker A (2 slots, killed mid-trial)
//	chaos run --temporal ADDR --concurrency 4 ─┴─ worker B (2 slots, finishes the run)
func TestTwoWorkersShareARun(t *testing.T) {
	if _, err := os.Stat("/proc/self/comm"); err != nil {
		t.Fatal("needs /proc to count processes")
	}
	pg := pgtest.Start(t)
	env := testkit.Env(t)
	data := filepath.Join(t.TempDir(), "data")
	srv := startServer(t, env, data, "--db", pg.URL("temporal"), "--no-worker")

	workerLine := regexp.MustCompile(`(?m)^worker: joined `)
	workers := map[string]*testkit.Proc{}
	for _, w := range []string{"A", "B"} {
		p := start(t, testkit.Env(t, "CHAOS_TEST_WORKER="+w), "worker", "--temporal", srv.Addr, "--max-trials", "2")
		p.WaitStdout(t, workerLine, testkit.StartTimeout)
		workers[w] = p
	}

	// The agent prints its worker, then waits for the release file.
	dir := t.TempDir()
	name := fmt.Sprintf("pair%d", time.Now().UnixNano()%1_000_000_000)
	release, script := filepath.Join(dir, "release"), filepath.Join(dir, name)
	testkit.WriteFile(t, script, "#!/bin/sh\necho \"worker=$CHAOS_TEST_WORKER\"\nwhile [ ! -e \"$1\" ]; do sleep 1; done\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	specPath := filepath.Join(dir, "wait.yaml")
	testkit.WriteFile(t, specPath, "name: wait\ntask: Nothing.\nagent:\n  command: \"true\"\ntools:\n  - name: noop\n    description: Answers nothing.\n    effect: none\n    reply: '{}'\n")
	const trials = 6
	out := filepath.Join(t.TempDir(), "out")
	// A short heartbeat timeout: the killed worker's trials are seen lost in seconds.
	p := start(t, env, "run", specPath, "--temporal", srv.Addr, "--data-dir", data, "--out", out,
		"--only", "clean", "--reps", strconv.Itoa(trials), "--concurrency", "4", "--heartbeat-timeout", "15s",
		"--", "exec "+spec.ShellQuote(script)+" "+spec.ShellQuote(release))

	onA := func() int { return len(agentsOf(t, out, "A")) }
	testkit.WaitFor(t, runTimeout, "4 agents running, 2 on worker A", func() bool {
		if code, done := p.Exited(); done {
			t.Fatalf("chaos run ended (exit %d)\nstdout:\n%s\nstderr:\n%s", code, p.Stdout, p.Stderr)
		}
		return testkit.CountProcesses(name) >= 4 && onA() >= 2
	})
	killedTrials := agentsOf(t, out, "A")
	workers["A"].Kill()
	t.Logf("killed worker A while it ran %v", killedTrials)
	testkit.WriteFile(t, release, "")

	if code := p.Wait(t, runTimeout); code != 4 { // nothing scored: the agent never meets the wall
		t.Fatalf("chaos run: exit code %d, want 4\nstdout:\n%s\nstderr:\n%s", code, p.Stdout, p.Stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "verdicts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var results []run.TrialResult
	if err := json.Unmarshal(b, &results); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, r := range results {
		seen[r.ID]++
		if r.Outcome != run.OutcomeCompleted {
			t.Errorf("trial %s: outcome %q (%s), want %s", r.ID, r.Outcome, r.Reason, run.OutcomeCompleted)
		}
	}
	for rep := 1; rep <= trials; rep++ {
		if id := spec.TrialID("main", "clean", rep); seen[id] != 1 {
			t.Errorf("trial %s recorded %d times, want once", id, seen[id])
		}
	}
	if len(seen) != trials {
		t.Errorf("%d trials recorded, want %d: %v", len(seen), trials, seen)
	}
	// The killed worker's trials ran again, on B: each trial's folder is its last attempt's.
	for _, id := range killedTrials {
		if got := workerOf(t, out, id); got != "B" {
			t.Errorf("trial %s, cut short on the killed worker A, ended on %q, want B", id, got)
		}
	}
}

// agentsOf lists the trials of the run folder whose agent (so far) runs or ran on worker w.
func agentsOf(t *testing.T, out, w string) []string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(out, "trials", "*", "*", "*"))
	var ids []string
	for _, d := range dirs {
		rel, _ := filepath.Rel(filepath.Join(out, "trials"), d)
		if workerOf(t, out, filepath.ToSlash(rel)) == w {
			ids = append(ids, filepath.ToSlash(rel))
		}
	}
	return ids
}

// workerOf is the worker the trial's agent printed it runs on ("" before it did).
func workerOf(t *testing.T, out, id string) string {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(out, "trials", filepath.FromSlash(id), "stdout"))
	first, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimPrefix(first, "worker=")
}
