package store_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/store"
	"github.com/crashwall/chaos/store/pgtest"
	"github.com/crashwall/chaos/tests/testkit"
)

var runID = regexp.MustCompile(`(?m)^run (\S+) -> `)

// TestResultsDatabase: two runs written to the results database (with their calls), read
// back by chaos runs, show and trend; the same numbers as the run folders.
func TestResultsDatabase(t *testing.T) {
	pg := pgtest.Start(t)
	url := pg.URL("results")
	env := testkit.Env(t)
	dir := t.TempDir()
	only := "clean,phantom_success@update_ticket"

	var ids, dirs []string
	for i := 0; i < 2; i++ {
		out := filepath.Join(dir, fmt.Sprintf("run%d", i))
		args := []string{"run", exampleSpec, "--only", only, "--out", out, "--data-dir", filepath.Join(dir, "data"), "--results-db", url}
		if i == 0 {
			args = append(args, "--results-calls")
		}
		r := mustChaos(t, env, args...)
		if strings.Contains(r.Stderr, "warning:") {
			t.Fatalf("run %d warned:\n%s", i, r.Stderr)
		}
		ids = append(ids, runID.FindStringSubmatch(r.Stdout)[1])
		dirs = append(dirs, out)
	}

	// Every trial of the folder is a row, with the folder's verdict.
	for i, id := range ids {
		var results []run.TrialResult
		testkit.ReadJSON(t, filepath.Join(dirs[i], "verdicts.json"), &results)
		var n, silent int
		query(t, url, "SELECT count(*), count(*) FILTER (WHERE verdict = 'silent_wrong') FROM trials WHERE run_id = '"+id+"'", &n, &silent)
		want := 0
		for _, r := range results {
			if r.Verdict == report.SilentWrong {
				want++
			}
		}
		if n != len(results) || silent != want {
			t.Errorf("run %s: %d trials (%d silent wrong) in the database, %d (%d) in the folder", id, n, silent, len(results), want)
		}
	}
	var calls int
	query(t, url, "SELECT count(*) FROM calls WHERE run_id = '"+ids[0]+"' AND type = 'call'", &calls)
	if calls == 0 {
		t.Errorf("--results-calls wrote no calls")
	}
	query(t, url, "SELECT count(*) FROM calls WHERE run_id = '"+ids[1]+"'", &calls)
	if calls != 0 {
		t.Errorf("%d calls written without --results-calls", calls)
	}

	t.Run("runs", func(t *testing.T) {
		r := mustChaos(t, env, "runs", "--results-db", url)
		for _, id := range ids {
			if !strings.Contains(r.Stdout, id) {
				t.Errorf("chaos runs does not list %s:\n%s", id, r.Stdout)
			}
		}
		// The newest first.
		if strings.Index(r.Stdout, ids[1]) > strings.Index(r.Stdout, ids[0]) {
			t.Errorf("not newest first:\n%s", r.Stdout)
		}
	})

	t.Run("show from the database and from the folder", func(t *testing.T) {
		fromDB := mustChaos(t, env, "show", ids[0], "--results-db", url).Stdout
		fromDir := mustChaos(t, env, "show", dirs[0]).Stdout
		var results []run.TrialResult
		testkit.ReadJSON(t, filepath.Join(dirs[0], "verdicts.json"), &results)
		for _, cell := range []string{"agent=blind", "agent=verifying"} {
			k, n := 0, 0
			for _, r := range results {
				if r.Cell == cell && r.Condition == "phantom_success@update_ticket" && report.Scored(r.Verdict) {
					n++
					if r.Verdict == report.SilentWrong {
						k++
					}
				}
			}
			want := report.NewRate(k, n).String()
			for name, out := range map[string]string{"database": fromDB, "folder": fromDir} {
				if !lineWith(out, cell, "phantom_success@update_ticket", want) {
					t.Errorf("show from the %s lacks %s phantom_success@update_ticket %s:\n%s", name, cell, want, out)
				}
			}
		}
		if !strings.Contains(fromDB, "from the results database") || !strings.Contains(fromDir, "from its folder") {
			t.Errorf("show does not say where it read from:\n%s\n%s", fromDB, fromDir)
		}
		r := chaos(t, env, "show", "no-such-run", "--results-db", url)
		oneClearLine(t, r, "run no-such-run is not in the results database")
	})

	t.Run("trend", func(t *testing.T) {
		r := mustChaos(t, env, "trend", "support-ticket", "--results-db", url)
		for _, id := range ids {
			if !strings.Contains(r.Stdout, id) {
				t.Errorf("trend lacks run %s:\n%s", id, r.Stdout)
			}
		}
		// The blind agent on phantom_success is silent wrong every time; the rate is
		// printed as k/n with its 80% interval.
		want := report.NewRate(1, 1).String()
		if !strings.Contains(r.Stdout, "agent=blind  phantom_success@update_ticket") || strings.Count(r.Stdout, want) < 2 {
			t.Errorf("trend does not show %s twice for agent=blind phantom_success:\n%s", want, r.Stdout)
		}
		if strings.Index(r.Stdout, ids[0]) > strings.Index(r.Stdout, ids[1]) {
			t.Errorf("trend is not oldest first:\n%s", r.Stdout)
		}
		r = mustChaos(t, env, "trend", "support-ticket", "--results-db", url, "--last", "1")
		if strings.Contains(r.Stdout, ids[0]) || !strings.Contains(r.Stdout, ids[1]) {
			t.Errorf("--last 1 shows other than the newest run:\n%s", r.Stdout)
		}
		oneClearLine(t, chaos(t, env, "trend", "no-such-spec", "--results-db", url), `has no runs of spec "no-such-spec"`)
		// CHAOS_DATABASE_URL stands in for the flag.
		r = mustChaos(t, append(env, store.EnvURL+"="+url), "trend", "support-ticket")
		if !strings.Contains(r.Stdout, ids[1]) {
			t.Errorf("trend with %s:\n%s", store.EnvURL, r.Stdout)
		}
	})
}

// TestBadResultsDatabase: a refused port, a wrong password and a newer schema each stop a
// command with one clear line and exit 1, before anything runs.
func TestBadResultsDatabase(t *testing.T) {
	pg := pgtest.Start(t)
	env := testkit.Env(t)
	newer := pg.URL("newer")
	mustChaos(t, env, "runs", "--results-db", newer)
	query(t, newer, "INSERT INTO schema_migrations (version, name) VALUES (99, 'future') RETURNING version", new(int))

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	for _, tc := range []struct{ name, url, want string }{
		{"refused port", fmt.Sprintf("postgres://chaos:hunter2@127.0.0.1:%d/results", closed), fmt.Sprintf("cannot reach PostgreSQL at 127.0.0.1:%d/results: connection refused", closed)},
		{"wrong password", pg.URLWith(pgtest.User, "hunter2", "results"), fmt.Sprintf(`PostgreSQL at 127.0.0.1:%d/results refused the password of user "chaos"`, pg.Port)},
		{"newer schema", newer, fmt.Sprintf("has schema version 99, newer than this chaos knows (%d): upgrade chaos", store.Latest())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, args := range [][]string{
				{"runs", "--results-db", tc.url},
				{"trend", "support-ticket", "--results-db", tc.url},
				{"run", exampleSpec, "--only", "clean", "--out", filepath.Join(dir, "never"), "--data-dir", filepath.Join(dir, "data"), "--results-db", tc.url},
				{"server", "--data-dir", filepath.Join(dir, "data2"), "--port", "0", "--ui-port", "-1", "--results-db", tc.url},
			} {
				oneClearLine(t, chaos(t, env, args...), tc.want, "hunter2")
			}
			if _, err := os.Stat(filepath.Join(dir, "never", "verdicts.json")); err == nil {
				t.Errorf("the run went ahead")
			}
		})
	}
}

// TestResultsDatabaseGoesAwayMidRun: the database stops while the agents run. The run
// ends normally with its whole folder, and says which rows it could not write, in
// summary.txt and on a warning line.
func TestResultsDatabaseGoesAwayMidRun(t *testing.T) {
	pg := pgtest.Start(t)
	url := pg.URL("results")
	env := testkit.Env(t)
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
	os.MkdirAll(gate, 0o755)
	// Every agent says it started, then waits for the test to open the gate.
	spec := specWith(t, dir, `command: "{chaos} agent scripted`,
		fmt.Sprintf(`command: "touch %[1]s/started; while [ ! -f %[1]s/open ]; do sleep 0.05; done; {chaos} agent scripted`, gate))
	out := filepath.Join(dir, "run")
	p := start(t, env, "run", spec, "--only", "clean,phantom_success@update_ticket", "--out", out, "--data-dir", filepath.Join(dir, "data"), "--results-db", url, "--results-calls")
	testkit.WaitFor(t, runTimeout, "an agent starts", func() bool { _, err := os.Stat(filepath.Join(gate, "started")); return err == nil })
	pg.Stop()
	if err := os.WriteFile(filepath.Join(gate, "open"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code := p.Wait(t, runTimeout); code != 0 {
		t.Fatalf("the run exited %d\nstdout:\n%s\nstderr:\n%s", code, p.Stdout, p.Stderr)
	}

	for _, f := range []string{"manifest.json", "verdicts.json", "summary.txt", "report.html"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("the run folder lacks %s: %v", f, err)
		}
	}
	var results []run.TrialResult
	testkit.ReadJSON(t, filepath.Join(out, "verdicts.json"), &results)
	if len(results) != 4 {
		t.Fatalf("%d trials in verdicts.json, want 4", len(results))
	}
	id := runID.FindStringSubmatch(p.Stdout.String())[1]
	want := fmt.Sprintf("could not write run %s, 4 trials (%s", id, results[0].ID)
	summary := string(must(os.ReadFile(filepath.Join(out, "summary.txt"))))
	if !strings.Contains(summary, "--- results database") || !strings.Contains(summary, want) {
		t.Errorf("summary.txt does not say what was not written (%q):\n%s", want, summary)
	}
	if !strings.Contains(p.Stderr.String(), "warning: results database 127.0.0.1") || !strings.Contains(p.Stderr.String(), want) {
		t.Errorf("no warning line on stderr with %q:\n%s", want, p.Stderr)
	}
	if !strings.Contains(summary, "recorded calls") || !strings.Contains(summary, "the run folder has all of it") {
		t.Errorf("summary.txt:\n%s", summary)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// lineWith reports whether some line of out holds every one of parts.
func lineWith(out string, parts ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(line, p)
		}
		if ok {
			return true
		}
	}
	return false
}

var _ = time.Second
