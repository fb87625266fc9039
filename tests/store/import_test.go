package store_test

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/store"
	"github.com/crashwall/chaos/store/pgtest"
	"github.com/crashwall/chaos/tests/testkit"
)

// TestImport: two runs made with no results database are copied into one afterwards by
// chaos runs import, first one folder (with its calls), then the folder of the spec's
// runs, oldest first. The database then says what the folders say; importing again adds
// and changes nothing; a scheduled run's comparison.json comes along; and a folder that is
// not a run's, a damaged one, or a database that cannot be reached each stop the command
// with one line and exit 1, leaving nothing of that run written.
func TestImport(t *testing.T) {
	pg := pgtest.Start(t)
	url := pg.URL("results")
	env := testkit.Env(t)
	dir := t.TempDir()
	parent := filepath.Join(dir, "chaos-runs", "support-ticket")

	var ids, dirs []string
	for i := 0; i < 2; i++ {
		out := filepath.Join(parent, fmt.Sprintf("run%d", 1-i)) // the newer run sorts first by name
		r := mustChaos(t, env, "run", exampleSpec, "--only", "clean,phantom_success@update_ticket", "--out", out, "--data-dir", filepath.Join(dir, "data"))
		if strings.Contains(r.Stderr, "results database") {
			t.Fatalf("a run with no results database mentions one:\n%s", r.Stderr)
		}
		ids = append(ids, runID.FindStringSubmatch(r.Stdout)[1])
		dirs = append(dirs, out)
	}
	rows := func(id string) int {
		var n int
		query(t, url, "SELECT count(*) FROM runs WHERE run_id = '"+id+"'", &n)
		return n
	}

	// One folder, with its calls.
	r := mustChaos(t, env, "runs", "import", dirs[0], "--results-db", url, "--calls")
	calls := folderCalls(t, dirs[0])
	if calls == 0 {
		t.Fatalf("the run folder %s holds no recorded calls", dirs[0])
	}
	if want := fmt.Sprintf("imported %s: 4 trials, %d recorded calls\n", ids[0], calls); r.Stdout != want {
		t.Errorf("import printed %q, want %q (stderr %q)", r.Stdout, want, r.Stderr)
	}
	checkImported(t, url, ids[0], dirs[0])
	var n int
	query(t, url, "SELECT count(*) FROM calls WHERE run_id = '"+ids[0]+"'", &n)
	if n != calls {
		t.Errorf("%d calls in the database, %d call and rejected rows in the folder's records", n, calls)
	}

	// chaos show reads the same rates from the database as from the folder.
	fromDB := mustChaos(t, env, "show", ids[0], "--results-db", url).Stdout
	fromDir := mustChaos(t, env, "show", dirs[0]).Stdout
	if !strings.Contains(fromDB, "from the results database") {
		t.Errorf("show did not read the database:\n%s", fromDB)
	}
	for _, line := range strings.Split(fromDir, "\n") {
		if strings.Contains(line, "agent=") && !strings.Contains(fromDB, line) {
			t.Errorf("show from the database lacks the folder's line %q:\n%s", line, fromDB)
		}
	}

	// The spec's folder of runs, through CHAOS_DATABASE_URL: the new run is imported, the
	// first is there already; oldest first whatever the folders' names.
	withURL := append(append([]string(nil), env...), store.EnvURL+"="+url)
	r = mustChaos(t, withURL, "runs", "import", parent)
	t.Logf("chaos runs import %s:\n%s", parent, r.Stdout)
	want := fmt.Sprintf("already there %s: 4 trials (rewritten from its folder, no trial added)\nimported %s: 4 trials\n", ids[0], ids[1])
	if r.Stdout != want {
		t.Errorf("import of %s printed %q, want %q (stderr %q)", parent, r.Stdout, want, r.Stderr)
	}
	checkImported(t, url, ids[1], dirs[1])
	listed := mustChaos(t, env, "runs", "--results-db", url).Stdout
	for _, id := range ids {
		if !lineWith(listed, id, "support-ticket", "4/4") {
			t.Errorf("chaos runs does not list %s with 4/4 trials:\n%s", id, listed)
		}
	}

	// Again: nothing added, nothing changed (the calls of the first run stay).
	before := pgtest.ResultsTables(t, url)
	mustChaos(t, env, "runs", "import", parent, dirs[0], "--results-db", url)
	if after := pgtest.ResultsTables(t, url); after != before {
		t.Errorf("importing again changed the database:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	query(t, url, "SELECT count(*) FROM runs", &n)
	if n != 2 {
		t.Errorf("%d runs after importing the same folders again, want 2", n)
	}

	// A scheduled run's folder holds its comparison with the previous run.
	prev, err := report.LoadRun(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	cur, err := report.LoadRun(dirs[1])
	if err != nil {
		t.Fatal(err)
	}
	diff, err := report.Diff(prev, cur, false)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"schedule": "nightly", "previous_run_id": ids[0], "method": "McNemar", "rows": diff})
	if err := os.WriteFile(filepath.Join(dirs[1], "comparison.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	r = mustChaos(t, env, "runs", "import", dirs[1], "--results-db", url)
	if !strings.Contains(r.Stdout, "schedule nightly compared with "+ids[0]) {
		t.Errorf("import of a scheduled run printed %q", r.Stdout)
	}
	query(t, url, "SELECT count(*) FROM comparisons WHERE run_id = '"+ids[1]+"'", &n)
	if n != len(diff) || n == 0 {
		t.Errorf("%d comparison rows, want %d", n, len(diff))
	}
	shown := mustChaos(t, env, "show", ids[1], "--results-db", url).Stdout
	if !strings.Contains(shown, "schedule nightly: no regression against "+ids[0]) {
		t.Errorf("show of the imported scheduled run:\n%s", shown)
	}

	// Bad input: one line, exit 1, nothing of that run written.
	empty := t.TempDir()
	oneClearLine(t, chaos(t, env, "runs", "import", empty, "--results-db", url), empty+" is not a run folder: it has no manifest.json")

	damaged := filepath.Join(t.TempDir(), "damaged")
	if err := os.MkdirAll(damaged, 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := strings.Replace(string(must(os.ReadFile(filepath.Join(dirs[0], "manifest.json")))), ids[0], "damaged-run", 1)
	verdicts := must(os.ReadFile(filepath.Join(dirs[0], "verdicts.json")))
	for name, b := range map[string][]byte{"manifest.json": []byte(manifest), "verdicts.json": verdicts[:len(verdicts)/2]} {
		if err := os.WriteFile(filepath.Join(damaged, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	oneClearLine(t, chaos(t, env, "runs", "import", damaged, "--results-db", url), "run folder "+damaged+" is damaged: verdicts.json: unexpected end of JSON input; nothing of it was imported")
	if rows("damaged-run") != 0 {
		t.Errorf("the damaged run has a row")
	}

	// A good folder beside a bad one is imported; the bad one is named.
	r = chaos(t, env, "runs", "import", dirs[0], empty, "--results-db", url)
	if !strings.HasPrefix(r.Stdout, "already there "+ids[0]) {
		t.Errorf("the good folder beside a bad one: %q", r.Stdout)
	}
	r.Stdout = ""
	oneClearLine(t, r, empty+" is not a run folder")

	oneClearLine(t, chaos(t, env, "runs", "import", dirs[0]), "no results database to import into: give --results-db")

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().(*net.TCPAddr).Port
	l.Close()
	for _, tc := range []struct{ url, want string }{
		{fmt.Sprintf("postgres://chaos:hunter2@127.0.0.1:%d/results", closed), fmt.Sprintf("results database: cannot reach PostgreSQL at 127.0.0.1:%d/results: connection refused", closed)},
		{pg.URLWith(pgtest.User, "hunter2", "results"), fmt.Sprintf(`results database: PostgreSQL at 127.0.0.1:%d/results refused the password of user "chaos"`, pg.Port)},
	} {
		r := chaos(t, env, "runs", "import", damaged, dirs[0], "--results-db", tc.url)
		t.Logf("a damaged folder and a good one, into a database that cannot be used (exit %d):\n%s", r.Code, r.Stderr)
		// The damaged folder is named on its own line; the database's line is the last.
		lines := strings.Split(strings.TrimRight(r.Stderr, "\n"), "\n")
		if len(lines) != 2 || !strings.Contains(lines[0], "damaged") {
			t.Errorf("stderr %q: want the damaged folder's line, then the database's", r.Stderr)
		}
		r.Stderr = lines[len(lines)-1]
		oneClearLine(t, r, tc.want, "hunter2")
		if !strings.HasSuffix(r.Stderr, "; nothing was imported") {
			t.Errorf("stderr %q does not say nothing was imported", r.Stderr)
		}
		if r.Stdout != "" {
			t.Errorf("stdout %q with no database", r.Stdout)
		}
	}
}

// checkImported compares the rows of a run with its folder: the run's counts, every
// trial with its verdict, and the verdict counts.
func checkImported(t *testing.T, url, id, dir string) {
	t.Helper()
	var results []run.TrialResult
	testkit.ReadJSON(t, filepath.Join(dir, "verdicts.json"), &results)
	byVerdict := map[string]int{}
	for _, r := range results {
		if r.Verdict != "" {
			byVerdict[r.Verdict]++
		}
	}
	var trials, finished, n int
	var outDir, verdicts string
	query(t, url, "SELECT trials, finished, out_dir, by_verdict::text FROM runs WHERE run_id = '"+id+"'", &trials, &finished, &outDir, &verdicts)
	var gotVerdicts map[string]int
	if err := json.Unmarshal([]byte(verdicts), &gotVerdicts); err != nil {
		t.Fatal(err)
	}
	if trials != 4 || finished != len(results) || outDir != dir || fmt.Sprint(gotVerdicts) != fmt.Sprint(byVerdict) {
		t.Errorf("run %s: trials %d, finished %d, out_dir %s, by_verdict %v; the folder %s has %d trials, %v",
			id, trials, finished, outDir, gotVerdicts, dir, len(results), byVerdict)
	}
	query(t, url, "SELECT count(*) FROM trials WHERE run_id = '"+id+"'", &n)
	if n != len(results) {
		t.Errorf("run %s: %d trial rows, %d in verdicts.json", id, n, len(results))
	}
	for _, r := range results {
		var verdict string
		query(t, url, fmt.Sprintf("SELECT verdict FROM trials WHERE run_id = '%s' AND trial_id = '%s'", id, r.ID), &verdict)
		if verdict != r.Verdict {
			t.Errorf("trial %s: verdict %q in the database, %q in the folder", r.ID, verdict, r.Verdict)
		}
	}
}

// folderCalls counts the call and rejected rows of a run folder's records.
func folderCalls(t *testing.T, dir string) int {
	t.Helper()
	var results []run.TrialResult
	testkit.ReadJSON(t, filepath.Join(dir, "verdicts.json"), &results)
	n := 0
	for _, r := range results {
		l, err := record.ReadFile(filepath.Join(dir, "trials", filepath.FromSlash(r.ID), "record.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range l.Rows {
			if row.Type == record.TypeCall || row.Type == record.TypeRejected {
				n++
			}
		}
	}
	return n
}
