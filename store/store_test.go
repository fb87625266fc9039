package store_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/store"
	"github.com/crashwall/chaos/store/pgtest"
)

// TestStore runs against one throwaway PostgreSQL server; each subtest has its own database.
func TestStore(t *testing.T) {
	pg := pgtest.Start(t)
	dbs := 0
	fresh := func(t *testing.T) string {
		dbs++
		return pg.CreateDatabase(fmt.Sprintf("store_%d", dbs))
	}

	// Several workers that start at once on a results database that does not exist yet
	// all create it: whoever loses the race must take the database the winner made
	// (42P04, or 23505 on pg_database_datname_index when both inserted it at once).
	t.Run("concurrent openers create the database once", func(t *testing.T) {
		const rounds, openers = 10, 8
		for round := range rounds {
			url := pg.URL(fmt.Sprintf("racing_%d", round))
			start := make(chan struct{})
			errs := make(chan error, openers)
			var wg sync.WaitGroup
			for range openers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					s, err := store.Open(context.Background(), url)
					if err == nil {
						s.Close()
					}
					errs <- err
				}()
			}
			close(start)
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatalf("round %d: an opener failed: %v", round+1, err)
				}
			}
			if v := version(t, open(t, url)); v != store.Latest() {
				t.Errorf("round %d: schema version %d, want %d", round+1, v, store.Latest())
			}
		}
	})

	t.Run("migrations from empty", func(t *testing.T) {
		url := fresh(t)
		s := open(t, url)
		if v := version(t, s); v != store.Latest() {
			t.Fatalf("schema version %d after Open, want %d", v, store.Latest())
		}
		if store.Latest() < 2 {
			t.Fatalf("only %d migrations: an upgrade cannot be tested", store.Latest())
		}
		for _, table := range []string{"runs", "trials", "comparisons", "calls", "schema_migrations"} {
			if n := count(t, url, "SELECT count(*) FROM information_schema.tables WHERE table_name = '"+table+"'"); n != 1 {
				t.Errorf("table %s: %d, want 1", table, n)
			}
		}
		// Opening again applies nothing and keeps one row per migration.
		s.Close()
		s = open(t, url)
		if n := count(t, url, "SELECT count(*) FROM schema_migrations"); n != store.Latest() {
			t.Errorf("%d rows in schema_migrations after a second Open, want %d", n, store.Latest())
		}
	})

	t.Run("migration from the previous version keeps the data", func(t *testing.T) {
		url := fresh(t)
		ctx := context.Background()
		prev, err := store.OpenAt(ctx, url, store.Latest()-1)
		if err != nil {
			t.Fatal(err)
		}
		if v := version(t, prev); v != store.Latest()-1 {
			t.Fatalf("schema version %d, want %d", v, store.Latest()-1)
		}
		r, trials := sampleRun("run-old", "spec-a", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), []string{"silent_wrong", "correct"})
		if err := prev.WriteRun(ctx, r, trials, nil); err != nil {
			t.Fatalf("write at version %d: %v", store.Latest()-1, err)
		}
		prev.Close()

		s := open(t, url)
		if v := version(t, s); v != store.Latest() {
			t.Fatalf("schema version %d after the upgrade, want %d", v, store.Latest())
		}
		got, row, err := s.LoadRun(ctx, "run-old")
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Results) != 2 || got.Results[0].Verdict != "silent_wrong" || row.Schedule != "" || row.Regressed {
			t.Fatalf("run after the upgrade: %+v %+v", got.Results, row)
		}
		// The new version's tables take rows for the old run.
		if err := s.WriteComparison(ctx, store.Comparison{RunID: "run-old", Schedule: "nightly"}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("writes are idempotent by run and trial id", func(t *testing.T) {
		url := fresh(t)
		s := open(t, url)
		ctx := context.Background()
		r, trials := sampleRun("run-1", "spec-a", time.Now().UTC(), []string{"silent_wrong", "correct", "no_verdict"})
		calls := []store.Call{
			{TrialID: trials[0].ID, Row: record.Row{Type: record.TypeCall, Seq: 1, Tool: "update_ticket", Reply: "ok\x00", Hit: &record.Hit{Fired: true}}},
			{TrialID: trials[0].ID, Row: record.Row{Type: record.TypeCall, Seq: 2, Tool: "get_ticket_field"}},
		}
		for i := 0; i < 3; i++ {
			if err := s.WriteRun(ctx, r, trials, calls); err != nil {
				t.Fatalf("write %d: %v", i, err)
			}
		}
		if n := count(t, url, "SELECT count(*) FROM runs"); n != 1 {
			t.Errorf("%d runs, want 1", n)
		}
		if n := count(t, url, "SELECT count(*) FROM trials"); n != 3 {
			t.Errorf("%d trials, want 3", n)
		}
		if n := count(t, url, "SELECT count(*) FROM calls"); n != 2 {
			t.Errorf("%d calls, want 2", n)
		}
		// Written again with another verdict and one call fewer (a trial run again): updated.
		trials[0].Verdict = "reported_honestly"
		r.Finished = 3
		if err := s.WriteRun(ctx, r, trials, calls[:1]); err != nil {
			t.Fatal(err)
		}
		if n := count(t, url, "SELECT count(*) FROM trials WHERE verdict = 'reported_honestly'"); n != 1 {
			t.Errorf("the verdict was not updated")
		}
		if n := count(t, url, "SELECT count(*) FROM calls"); n != 1 {
			t.Errorf("%d calls after the trial was written with one, want 1", n)
		}
		if n := count(t, url, "SELECT count(*) FROM trials"); n != 3 {
			t.Errorf("%d trials, want 3", n)
		}
		// Comparisons are replaced, not added to.
		cmp := store.Comparison{RunID: "run-1", Schedule: "nightly", PreviousRunID: "run-0", Rows: []report.DiffRow{
			{Cell: "main", Condition: "clean", A: report.NewRate(0, 6), B: report.NewRate(6, 6), Worse: 6, P: 0.03, Method: "McNemar", Call: "worse"},
		}}
		for i := 0; i < 2; i++ {
			if err := s.WriteComparison(ctx, cmp); err != nil {
				t.Fatal(err)
			}
		}
		if n := count(t, url, "SELECT count(*) FROM comparisons"); n != 1 {
			t.Errorf("%d comparisons, want 1", n)
		}
		_, row, err := s.LoadRun(ctx, "run-1")
		if err != nil {
			t.Fatal(err)
		}
		if !row.Regressed || row.Schedule != "nightly" || row.PreviousRunID != "run-0" {
			t.Errorf("run row after the comparison: %+v", row)
		}
		rows, err := s.Comparisons(ctx, "run-1")
		if err != nil || len(rows) != 1 || rows[0].B.K != 6 || rows[0].Call != "worse" {
			t.Errorf("comparisons read back: %+v, %v", rows, err)
		}
	})

	t.Run("two processes migrating at once", func(t *testing.T) {
		url := fresh(t)
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, err := store.Open(context.Background(), url)
				if err == nil {
					s.Close()
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		if n := count(t, url, "SELECT count(*) FROM schema_migrations"); n != store.Latest() {
			t.Errorf("%d rows in schema_migrations, want %d", n, store.Latest())
		}
	})

	t.Run("a database that does not exist yet is created", func(t *testing.T) {
		s := open(t, pg.URL("made_by_open"))
		if v := version(t, s); v != store.Latest() {
			t.Fatalf("version %d", v)
		}
	})

	t.Run("a newer schema is refused in one line", func(t *testing.T) {
		url := fresh(t)
		open(t, url).Close()
		exec(t, url, "INSERT INTO schema_migrations (version, name) VALUES (99, 'from_the_future')")
		_, err := store.Open(context.Background(), url)
		var newer *store.NewerSchemaError
		if !errors.As(err, &newer) || newer.Have != 99 || newer.Know != store.Latest() {
			t.Fatalf("Open = %v, want a NewerSchemaError (have 99)", err)
		}
		want := fmt.Sprintf("has schema version 99, newer than this chaos knows (%d): upgrade chaos", store.Latest())
		if msg := err.Error(); !strings.Contains(msg, want) || strings.Contains(msg, "\n") || strings.Contains(msg, pgtest.Password) {
			t.Errorf("message %q: want one line with %q and no password", msg, want)
		}
	})

	t.Run("connection failures read as one sentence", func(t *testing.T) {
		closed := closedPort(t)
		for _, tc := range []struct {
			name, url, want string
		}{
			{"wrong password", pg.URLWith(pgtest.User, "not-the-password", "postgres"), `refused the password of user "chaos"`},
			{"unknown user", pg.URLWith("nobody", "x", "postgres"), `refused the password of user "nobody"`},
			{"refused port", fmt.Sprintf("postgres://chaos:secret@127.0.0.1:%d/results?sslmode=disable", closed), fmt.Sprintf("cannot reach PostgreSQL at 127.0.0.1:%d/results: connection refused", closed)},
			{"not a URL", "postgres://chaos:secret@127.0.0.1:notaport/x", "the results database URL is not valid"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				_, err := store.Open(ctx, tc.url)
				if err == nil {
					t.Fatal("Open succeeded")
				}
				msg := err.Error()
				if !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
					t.Errorf("error %q: want one line containing %q", msg, tc.want)
				}
				for _, secret := range []string{"secret", "not-the-password"} {
					if strings.Contains(msg, secret) {
						t.Errorf("error %q shows the password", msg)
					}
				}
			})
		}
	})

	t.Run("trend", func(t *testing.T) {
		url := fresh(t)
		s := open(t, url)
		ctx := context.Background()
		day := time.Date(2026, 3, 1, 2, 0, 0, 0, time.UTC)
		for i, verdicts := range [][]string{
			{"correct", "correct", "reported_honestly"},
			{"silent_wrong", "correct", "no_verdict"},
			{"silent_wrong", "silent_wrong", "correct"},
		} {
			r, trials := sampleRun(fmt.Sprintf("run-%d", i), "spec-t", day.Add(time.Duration(i)*24*time.Hour), verdicts)
			if err := s.WriteRun(ctx, r, trials, nil); err != nil {
				t.Fatal(err)
			}
		}
		other, trials := sampleRun("other", "spec-other", day, []string{"silent_wrong"})
		if err := s.WriteRun(ctx, other, trials, nil); err != nil {
			t.Fatal(err)
		}
		got, err := s.Trend(ctx, "spec-t", 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].Run.RunID != "run-1" || got[1].Run.RunID != "run-2" {
			t.Fatalf("trend runs: %+v, want run-1 then run-2", got)
		}
		key := store.TrendKey{Cell: "main", Condition: "phantom_success@save"}
		if r := got[0].Rates[key]; r.K != 1 || r.N != 2 {
			t.Errorf("run-1: %v, want 1/2 (no_verdict is not scored)", r)
		}
		if r := got[1].Rates[key]; r.K != 2 || r.N != 3 || r.String() != report.NewRate(2, 3).String() {
			t.Errorf("run-2: %v, want 2/3", r)
		}
	})
}

// sampleRun is a run of one condition whose trials have the given verdicts.
func sampleRun(id, spec string, started time.Time, verdicts []string) (store.RunRow, []run.TrialResult) {
	r := store.RunRow{RunID: id, SpecName: spec, Plan: "1 cell x 1 condition", Conditions: []string{"phantom_success@save"},
		Cells: []string{"main"}, Trials: len(verdicts), Finished: len(verdicts), Started: started, Ended: started.Add(time.Minute),
		OutDir: "/runs/" + id, Host: "test", ByVerdict: map[string]int{}}
	var trials []run.TrialResult
	for i, v := range verdicts {
		r.ByVerdict[v]++
		trials = append(trials, run.TrialResult{ID: fmt.Sprintf("main/phantom_success@save/%d", i+1), Cell: "main",
			Condition: "phantom_success@save", Rep: i + 1, Seed: int64(100 + i), Outcome: run.OutcomeCompleted,
			Verdict: v, WorldOK: v == "correct", Closing: "Done.", SuccessPossible: true, Calls: 3, Fired: 1, Duration: time.Second})
	}
	return r, trials
}

func open(t *testing.T, url string) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func version(t *testing.T, s *store.Store) int {
	t.Helper()
	v, err := s.Version(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func count(t *testing.T, url, query string) int {
	t.Helper()
	return pgtest.QueryOne[int](t, url, query)
}

func exec(t *testing.T, url, stmt string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, stmt); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

// closedPort is a local port nothing listens on.
func closedPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}
