package run_test

import (
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
func TestDatabaseLoss(t *testing.T) {
	pg := pgtest.Start(t)
	env := testkit.Env(t)
	data, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
	// A first start on PostgreSQL sets up Temporal's schema: minutes on two busy cores,
	// longer than testkit.StartServer waits.
	srv := startChaos(t, env, "server", "--data-dir", data, "--port", "0", "--ui-port", "-1", "--db", pg.URL("temporal"))
	srv.WaitStdout(t, regexp.MustCompile(`(?m)^ready; Ctrl-C stops$`), 5*time.Minute)
	addr := regexp.MustCompile(`(?m)^Temporal server: (\S+) `).FindStringSubmatch(srv.Stdout.String())
	if addr == nil {
		t.Fatalf("chaos server printed no address:\n%s", srv.Stdout)
	}

	conds := []string{"clean", "phantom_success@update_ticket", "transient_error@read_email", "permanent_error@update_ticket"}
	cells := exampleCells(t)
	conds = conds[:max(2, 4/len(cells))]
	ids := trialIDs(cells, conds)
	results := pg.URL("results")
	agent := `sleep 3; exec ` + blindAgent()
	p := startChaos(t, env, "run", exampleSpec, "--temporal", addr[1], "--data-dir", data, "--out", out,
		"--reps", "1", "--concurrency", "2", "--only", strings.Join(conds, ","), "--results-db", results, "--", agent)
	testkit.WaitFor(t, 4*runTimeout, "a trial's agent to start", func() bool {
		started, _ := filepath.Glob(filepath.Join(out, "trials", "*", "*", "*", "stdout"))
		return len(started) > 0
	})

	pg.Stop()
	time.Sleep(5 * time.Second) // the outage itself: nothing here waits on a result
	pg.Restart()

	if code := p.Wait(t, 6*runTimeout); code != 0 {
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
