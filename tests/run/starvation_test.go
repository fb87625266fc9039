package run_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/tests/testkit"
)

// TestStarvedWorker starves a run of CPU the repeatable way, by stopping its processes
// (SIGSTOP) while agents run and letting them go on later (SIGCONT):
//
//   - the server, for longer than the SDK's one-second heartbeat RPC deadline but less
//     than the heartbeat timeout: before, every running agent's heartbeat failed with a
//     deadline error and the SDK cancelled it, a trial recorded as failed;
//   - the only worker, for longer than the heartbeat timeout: its running trials are
//     lost and run again (worker_lost) on the same worker once it runs again.
//
// Every planned trial must be recorded exactly once with a verdict (not no_verdict), and a second
// identical run, starved the same way, must give the same verdicts.
func TestStarvedWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("two starved runs take minutes; make test runs it")
	}
	const heartbeat = 6 * time.Second
	conds := []string{"clean", "phantom_success@update_ticket", "transient_error@read_email", "permanent_error@update_ticket"}
	cells := exampleCells(t)
	conds = conds[:max(1, 4/len(cells))]
	ids := trialIDs(cells, conds)

	var runs []map[string]run.TrialResult
	for attempt := range 2 {
		env := testkit.Env(t)
		data, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
		srv := startServer(t, env, data, -1, "--no-worker")
		w := startWorker(t, env, srv.Addr)
		// Stopped processes must go on before the cleanup can stop them.
		t.Cleanup(func() { w.Signal(t, syscall.SIGCONT); srv.Signal(t, syscall.SIGCONT) })

		// The agent waits long enough for both stops to fall while it runs.
		agent := `sleep 4; exec ` + blindAgent()
		runProc := startChaos(t, env, "run", exampleSpec, "--temporal", srv.Addr, "--data-dir", data, "--out", out,
			"--reps", "1", "--concurrency", fmt.Sprint(len(ids)), "--only", strings.Join(conds, ","),
			"--heartbeat-timeout", heartbeat.String(), "--", agent)
		testkit.WaitFor(t, runTimeout, "a trial's agent to start", func() bool {
			started, _ := filepath.Glob(filepath.Join(out, "trials", "*", "*", "*", "stdout"))
			return len(started) > 0
		})

		srv.Signal(t, syscall.SIGSTOP)
		time.Sleep(heartbeat / 2) // the starvation itself: nothing here waits on a result
		srv.Signal(t, syscall.SIGCONT)

		w.Signal(t, syscall.SIGSTOP)
		time.Sleep(3 * heartbeat) // the starvation itself, past the heartbeat timeout: the worker's trials are lost
		w.Signal(t, syscall.SIGCONT)

		if code := runProc.Wait(t, runTimeout); code != 0 {
			t.Fatalf("run %d: chaos run: exit code %d, want 0\nstdout:\n%s\nstderr:\n%s", attempt+1, code, runProc.Stdout, runProc.Stderr)
		}
		results := readVerdicts(t, out, ids)
		if dirs := trialFolders(t, out); len(dirs) != len(ids) {
			t.Errorf("run %d: %d trial folders, want %d: %v", attempt+1, len(dirs), len(ids), dirs)
		}
		for _, id := range ids {
			checkTrialFolder(t, out, id)
			r := results[id]
			// Scored, or not_triggered where the blind agent never made the faulted call:
			// a verdict on the agent, never no_verdict.
			if r.Outcome != run.OutcomeCompleted || r.Verdict == "" || r.Verdict == report.NoVerdict {
				t.Errorf("run %d: trial %s: outcome %q, verdict %q (%s), want %s with a verdict", attempt+1, id, r.Outcome, r.Verdict, r.Reason, run.OutcomeCompleted)
			}
		}
		runs = append(runs, results)
	}
	for _, id := range ids {
		if a, b := runs[0][id].Verdict, runs[1][id].Verdict; a != b {
			t.Errorf("trial %s: verdict %q in the first run, %q in the second", id, a, b)
		}
	}
}
