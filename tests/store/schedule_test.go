package store_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/activities"
	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/store/pgtest"
)

// TestScheduleFindsARegression: a schedule on the embedded server runs the example every
// 5 seconds. Its agent reads its style from a file: the verifying agent at first, then the
// test flips the file to the blind agent, which says "Done" when the save did not happen.
// The first blind run is compared (paired) with the verifying run before it, the
// regression is posted to a webhook on 127.0.0.1, marked in the run's summary, written to
// the results database and shown by chaos show, trend and schedule describe.
func TestScheduleFindsARegression(t *testing.T) {
	pg := pgtest.Start(t)
	results := pg.URL("results")
	env := testEnv(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	style := filepath.Join(dir, "style")
	if err := os.WriteFile(style, []byte("verifying"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := specWith(t, dir,
		"axes:\n  agent: [blind, verifying]\n", "",
		"--style {agent}", fmt.Sprintf("--style $(cat '%s')", style))

	posts := make(chan activities.RegressionNotice, 10)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var n activities.RegressionNotice
		if err := json.Unmarshal(b, &n); err != nil || r.Method != http.MethodPost {
			t.Errorf("webhook got %s %q: %v", r.Method, b, err)
		}
		posts <- n
	}))
	defer hook.Close()

	srv := startServer(t, env, data, "--results-db", results)
	addr := srv.waitStdout(t, regexp.MustCompile(`Temporal server: (\S+)`), time.Second)[1]
	runs := filepath.Join(dir, "runs")
	r := mustChaos(t, env, "schedule", "create", "nightly", spec, "--every", "5s", "--pair-with-previous",
		"--webhook", hook.URL+"/hooks/secret", "--only", "phantom_success@update_ticket", "--reps", "6", "--concurrency", "6",
		"--out", runs, "--data-dir", data)
	for _, want := range []string{"schedule nightly: every 5s", "overlap: skip", "catch-up window 1h0m0s", "compared paired"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("create says nothing of %q:\n%s", want, r.stdout)
		}
	}
	oneClearLine(t, chaos(t, env, "schedule", "create", "nightly", spec, "--every", "5s", "--data-dir", data), "there is a schedule nightly already")

	// Runs of the schedule, and those that finished (compared with the one before).
	folders := filepath.Join(runs, "support-ticket")
	count := func() (started, finished int) {
		entries, _ := os.ReadDir(folders)
		for _, e := range entries {
			started++
			if _, err := os.Stat(filepath.Join(folders, e.Name(), "comparison.json")); err == nil {
				finished++
			}
		}
		return
	}
	eventually(t, runTimeout, "the first scheduled run finishes", func() bool { _, f := count(); return f >= 1 })
	mustChaos(t, env, "schedule", "pause", "nightly", "--data-dir", data)
	eventually(t, runTimeout, "the runs in progress finish", func() bool { s, f := count(); return s == f })
	verifyingRuns, _ := count()
	if err := os.WriteFile(style, []byte("blind"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustChaos(t, env, "schedule", "unpause", "nightly", "--data-dir", data)

	var notice activities.RegressionNotice
	select {
	case notice = <-posts:
	case <-time.After(runTimeout):
		t.Fatalf("no regression posted within %s", runTimeout)
	}
	mustChaos(t, env, "schedule", "pause", "nightly", "--data-dir", data)

	if len(notice.Regressions) != 1 {
		t.Fatalf("notice: %+v, want one regression", notice)
	}
	reg := notice.Regressions[0]
	if reg.Condition != "phantom_success@update_ticket" || reg.A.K != 0 || reg.A.N != 6 || reg.B.K != 6 || reg.B.N != 6 || reg.Worse != 6 || reg.Call != "worse" {
		t.Errorf("regression %+v, want 0/6 -> 6/6 with 6 worse pairs", reg)
	}
	if !strings.Contains(reg.Method, "McNemar") || notice.Schedule != "nightly" || !strings.HasPrefix(notice.RunID, "nightly-") {
		t.Errorf("notice %+v", notice)
	}
	// The previous run was a verifying one: never silent wrong.
	var prev []run.TrialResult
	readJSON(t, filepath.Join(folders, notice.PreviousRunID, "verdicts.json"), &prev)
	for _, tr := range prev {
		if !report.Scored(tr.Verdict) || tr.Verdict == report.SilentWrong {
			t.Errorf("previous run %s: trial %s is %s, want a scored verdict other than silent_wrong", notice.PreviousRunID, tr.ID, tr.Verdict)
		}
	}
	if started, _ := count(); verifyingRuns < 1 || started < 2 {
		t.Errorf("%d runs (%d before the flip): the schedule did not fire twice", started, verifyingRuns)
	}

	summary := string(must(os.ReadFile(filepath.Join(notice.RunDir, "summary.txt"))))
	if !strings.Contains(summary, "REGRESSION: 1 condition(s) got significantly worse") || !strings.Contains(summary, "previous run "+notice.PreviousRunID) {
		t.Errorf("the run's summary.txt does not mark the regression:\n%s", summary)
	}
	var regressed bool
	var worse int
	query(t, results, fmt.Sprintf("SELECT r.regressed, count(c.*) FILTER (WHERE c.call = 'worse') FROM runs r LEFT JOIN comparisons c USING (run_id) WHERE r.run_id = '%s' AND r.schedule = 'nightly' AND r.previous_run_id = '%s' GROUP BY r.regressed", notice.RunID, notice.PreviousRunID), &regressed, &worse)
	if !regressed || worse != 1 {
		t.Errorf("results database: regressed %v, %d worse comparisons", regressed, worse)
	}

	show := mustChaos(t, env, "show", notice.RunID, "--results-db", results).stdout
	if !strings.Contains(show, "schedule nightly: REGRESSION against "+notice.PreviousRunID) || !lineWith(show, "phantom_success@update_ticket", "REGRESSION: worse") {
		t.Errorf("chaos show:\n%s", show)
	}
	trend := mustChaos(t, env, "trend", "support-ticket", "--results-db", results).stdout
	if !lineWith(trend, notice.RunID, "6/6 = 100%", "REGRESSION vs "+notice.PreviousRunID) || !lineWith(trend, notice.PreviousRunID, "0/6 = 0%") {
		t.Errorf("chaos trend:\n%s", trend)
	}

	desc := mustChaos(t, env, "schedule", "describe", "nightly", "--data-dir", data).stdout
	for _, want := range []string{"every 5s", "paused", "overlap    skip", "catch-up window 1h0m0s", "paired with the previous run", hook.URL + "/...", "REGRESSION in 1 condition(s) vs " + notice.PreviousRunID} {
		if !strings.Contains(desc, want) {
			t.Errorf("describe lacks %q:\n%s", want, desc)
		}
	}
	if strings.Contains(desc, "secret") {
		t.Errorf("describe shows the webhook's path:\n%s", desc)
	}
	list := mustChaos(t, env, "schedule", "list", "--data-dir", data).stdout
	if !lineWith(list, "nightly", "support-ticket", "every 5s", "paused") {
		t.Errorf("list:\n%s", list)
	}
	checkScheduledHistory(t, addr, notice.RunID)

	mustChaos(t, env, "schedule", "delete", "nightly", "--data-dir", data)
	oneClearLine(t, chaos(t, env, "schedule", "describe", "nightly", "--data-dir", data), "no schedule nightly")
}
