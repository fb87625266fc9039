package run_test

import (
	"github.com/crashwall/chaos/spec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/run"
)

// TestDurability kills the only worker (SIGKILL) while it runs trials and starts another:
// the run carries on, the killed worker's trials are run again from scratch on the new
// one, and every planned trial is recorded exactly once, with a closed record.
//
//	chaos server --no-worker ── worker A (killed mid-trial) ── worker B (finishes the run)
//	chaos run --temporal ADDR ─┘
func TestDurability(t *testing.T) {
	env := testEnv(t)
	data, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
	srv := startServer(t, env, data, -1, "--no-worker")
	workerA := startWorker(t, env, srv.addr)

	// Six trials or so: these conditions in each of the example's cells.
	conds := []string{"clean", "phantom_success@update_ticket", "transient_error@read_email", "stale_read@get_ticket_field", "empty_success@update_ticket", "permanent_error@update_ticket"}
	cells := exampleCells(t)
	conds = conds[:max(1, 6/len(cells))]
	ids := trialIDs(cells, conds)
	// An agent that takes a while, so the worker dies while agents run. $0 and $1 are the
	// filled-in (shell-quoted) {wall} and {spec}.
	agent := `sh -c 'sleep 2; exec ` + spec.ShellQuote(chaosBin) + ` agent scripted --style blind --transport stdio --wall-command "$0" --spec "$1"' {wall} {spec}`
	runProc := startChaos(t, env, "run", exampleSpec, "--temporal", srv.addr, "--data-dir", data, "--out", out,
		"--reps", "1", "--concurrency", "2", "--only", strings.Join(conds, ","), "--", agent)

	// A trial's stdout appears when its agent starts.
	var running []string
	waitFor(t, runTimeout, "a trial's agent to start on worker A", func() bool {
		running, _ = filepath.Glob(filepath.Join(out, "trials", "*", "*", "*", "stdout"))
		return len(running) > 0
	})
	workerA.kill()
	killed := time.Now()
	t.Logf("killed worker A while %d trial(s) ran: %v", len(running), running)
	startWorker(t, env, srv.addr)

	if code := runProc.wait(t, runTimeout); code != 0 {
		t.Fatalf("chaos run: exit code %d, want 0\nstdout:\n%s\nstderr:\n%s", code, runProc.stdout, runProc.stderr)
	}
	results := readVerdicts(t, out, ids)
	if dirs := trialFolders(t, out); len(dirs) != len(ids) {
		t.Errorf("%d trial folders, want %d: %v", len(dirs), len(ids), dirs)
	}
	for _, id := range ids {
		l := checkTrialFolder(t, out, id)
		if r := results[id]; r.Outcome != run.OutcomeCompleted {
			t.Errorf("trial %s: outcome %q (%s), want %s", id, r.Outcome, r.Reason, run.OutcomeCompleted)
		}
		if l == nil || len(l.Rows) == 0 {
			continue
		}
		// A trial that was running on worker A was run again: its record is the new
		// attempt's, started after the kill, not the dead attempt's.
		dir := filepath.Join(out, "trials", filepath.FromSlash(id), "stdout")
		for _, r := range running {
			if r == dir && !l.Rows[0].Time.After(killed) {
				t.Errorf("trial %s ran on the killed worker, but its record started at %s, before the kill at %s", id, l.Rows[0].Time, killed)
			}
		}
	}
}
