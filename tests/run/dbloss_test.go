package run_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/store/pgtest"
	"github.com/crashwall/chaos/tests/testkit"
)

// TestDatabaseLoss kills PostgreSQL (pg_ctl stop -m immediate: no checkpoint, as a
// crash leaves it) while agents run, with both Temporal's history (`chaos server --db`)
// and the results database (`chaos run --results-db`) on it, and starts it again on the
// same files a few seconds later. The server and the worker wait for it: the run
// finishes on its own, every planned trial recorded exactly once with a verdict, and the
// results database gets every trial, as if nothing had happened.
//
// It does not pass yet, so make test does not run it (CHAOS_DBLOSS=1 does): run on
// 2026-12-01, every trial finished within 10 s of PostgreSQL coming back and the history
// shards were acquired again, but the experiment never went on to Aggregate (stalled for
// 7 minutes, then stopped). docs/ARCHITECTURE.md's table says so.
func TestDatabaseLoss(t *testing.T) {
	if os.Getenv("CHAOS_DBLOSS") != "1" {
		t.Skip("fails today (the run stalls after PostgreSQL restarts: docs/ARCHITECTURE.md, what survives what); CHAOS_DBLOSS=1 runs it")
	}
	pg := pgtest.Start(t)
	env := testkit.Env(t)
	data, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
	// The results database is the server's worker's setting: chaos run refuses
	// --results-db when the run goes to a running server.
	results := pg.URL("results")
	// A first start on PostgreSQL sets up Temporal's schema: minutes on two busy cores,
	// longer than testkit.StartServer waits.
	srv := startChaos(t, env, "server", "--data-dir", data, "--port", "0", "--ui-port", "-1", "--db", pg.URL("temporal"),
		"--results-db", results)
	srv.WaitStdout(t, regexp.MustCompile(`(?m)^ready; Ctrl-C stops$`), 5*time.Minute)
	addr := regexp.MustCompile(`(?m)^Temporal server: (\S+) `).FindStringSubmatch(srv.Stdout.String())
	if addr == nil {
		t.Fatalf("chaos server printed no address:\n%s", srv.Stdout)
	}

	conds := []string{"clean", "phantom_success@update_ticket", "transient_error@read_email", "permanent_error@update_ticket"}
	cells := exampleCells(t)
	conds = conds[:max(2, 4/len(cells))]
	ids := trialIDs(cells, conds)
	agent := `sleep 3; exec ` + blindAgent()
	p := startChaos(t, env, "run", exampleSpec, "--temporal", addr[1], "--data-dir", data, "--out", out,
		"--reps", "1", "--concurrency", "2", "--only", strings.Join(conds, ","), "--", agent)
	testkit.WaitFor(t, runTimeout, "a trial's agent to start", func() bool {
		if code, done := p.Exited(); done {
			t.Fatalf("chaos run exited (code %d) before any agent started\nstdout:\n%s\nstderr:\n%s", code, p.Stdout, p.Stderr)
		}
		started, _ := filepath.Glob(filepath.Join(out, "trials", "*", "*", "*", "stdout"))
		return len(started) > 0
	})

	pg.Stop()
	time.Sleep(5 * time.Second) // the outage itself: nothing here waits on a result
	pg.Restart()

	if code := p.Wait(t, 2*runTimeout); code != 0 {
		t.Fatalf("chaos run: exit code %d, want 0\nstdout:\n%s\nstderr:\n%s\nserver:\n%s", code, p.Stdout, p.Stderr, tail(srv.Stderr.String(), 4000))
	}
	verdicts := readVerdicts(t, out, ids)
	if dirs := trialFolders(t, out); len(dirs) != len(ids) {
		t.Errorf("%d trial folders, want %d: %v", len(dirs), len(ids), dirs)
	}
	for _, id := range ids {
		checkTrialFolder(t, out, id)
		if r := verdicts[id]; r.Outcome != run.OutcomeCompleted || r.Verdict == "" || r.Verdict == report.NoVerdict {
			t.Errorf("trial %s: outcome %q, verdict %q (%s), want %s with a verdict", id, r.Outcome, r.Verdict, r.Reason, run.OutcomeCompleted)
		}
	}
	runID := runIDOf(t, p.Stdout.String())
	if n := pgtest.QueryOne[int64](t, results, "SELECT count(*) FROM trials WHERE run_id = $1", runID); n != int64(len(ids)) {
		t.Errorf("%d trials of run %s in the results database, want %d", n, runID, len(ids))
	}
	if strings.Contains(p.Stderr.String(), "warning: results database") {
		t.Errorf("the results database was back before the run ended, yet chaos run warned:\n%s", p.Stderr)
	}
}
