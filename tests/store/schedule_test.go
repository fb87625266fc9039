package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/jackc/pgx/v5"

	"github.com/crashwall/chaos/activities"
	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/store/pgtest"
	"github.com/crashwall/chaos/tests/testkit"
	"github.com/crashwall/chaos/workflows"
)

// TestScheduleFindsARegression: a schedule on the embedded server runs the example every
// 5 seconds. Its agent reads its style from a file: the verifying agent at first, then the
// test flips the file to the blind agent, which says "Done" when the save did not happen.
// The first blind run is compared (paired) with the verifying run before it, the
// regression is posted to a webhook on 127.0.0.1, marked in the run's summary, written to
// the results database and shown by chaos show, trend and schedule describe.
//
// The webhook's URL is a secret: it is given as '${CHAOS_TEST_WEBHOOK}', set only in the
// server's environment (its worker posts), so the schedule and every run's history keep
// the reference, and the URL is in no file of the data directory, the run folders or
// PostgreSQL.
func TestScheduleFindsARegression(t *testing.T) {
	pg := pgtest.Start(t)
	results := pg.URL("results")
	env := testkit.Env(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	style := filepath.Join(dir, "style")
	if err := os.WriteFile(style, []byte("verifying"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := specWith(t, dir,
		"axes:\n  agent: [blind, verifying]\n", "",
		"--style {agent}", fmt.Sprintf("--style $(cat '%s')", style))

	// The secret part of the webhook's URL: unique, so finding it anywhere means the URL
	// was written there.
	secret := fmt.Sprintf("T0SECRET%x", time.Now().UnixNano())
	hookPath := "/hooks/" + secret
	posts := make(chan activities.RegressionNotice, 10)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var n activities.RegressionNotice
		if err := json.Unmarshal(b, &n); err != nil || r.Method != http.MethodPost || r.URL.Path != hookPath {
			t.Errorf("webhook got %s %s %q: %v", r.Method, r.URL.Path, b, err)
		}
		posts <- n
	}))
	defer hook.Close()
	const hookVar = "CHAOS_TEST_WEBHOOK"
	hookRef := "${" + hookVar + "}"
	hookURL := hook.URL + hookPath

	// Only the server (and so its worker) has the variable; chaos schedule create has not.
	serverEnv := append(slices.Clone(env), hookVar+"="+hookURL)
	srv := startServer(t, serverEnv, data, "--results-db", results)
	addr := srv.WaitStdout(t, regexp.MustCompile(`Temporal server: (\S+)`), time.Second)[1]
	runs := filepath.Join(dir, "runs")
	r := mustChaos(t, env, "schedule", "create", "nightly", spec, "--every", "5s", "--pair-with-previous",
		"--webhook", hookRef, "--only", "phantom_success@update_ticket", "--reps", "6", "--concurrency", "6",
		"--out", runs, "--data-dir", data)
	for _, want := range []string{"schedule nightly: every 5s", "overlap: skip", "catch-up window 1h0m0s", "compared paired", "webhook: " + hookRef + ", expanded from the worker's environment"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("create says nothing of %q:\n%s", want, r.Stdout)
		}
	}
	if want := "warning: --webhook " + hookRef + ": the environment variable " + hookVar + " is not set here; the worker expands it when it posts"; !strings.Contains(r.Stderr, want) {
		t.Errorf("create does not warn that the worker needs %s: stderr\n%s", hookVar, r.Stderr)
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
	testkit.WaitFor(t, runTimeout, "the first scheduled run finishes", func() bool { _, f := count(); return f >= 1 })
	mustChaos(t, env, "schedule", "pause", "nightly", "--data-dir", data)
	testkit.WaitFor(t, runTimeout, "the runs in progress finish", func() bool { s, f := count(); return s == f })
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
	testkit.ReadJSON(t, filepath.Join(folders, notice.PreviousRunID, "verdicts.json"), &prev)
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

	show := mustChaos(t, env, "show", notice.RunID, "--results-db", results).Stdout
	if !strings.Contains(show, "schedule nightly: REGRESSION against "+notice.PreviousRunID) || !lineWith(show, "phantom_success@update_ticket", "REGRESSION: worse") {
		t.Errorf("chaos show:\n%s", show)
	}
	trend := mustChaos(t, env, "trend", "support-ticket", "--results-db", results).Stdout
	if !lineWith(trend, notice.RunID, "6/6 = 100%", "REGRESSION vs "+notice.PreviousRunID) || !lineWith(trend, notice.PreviousRunID, "0/6 = 0%") {
		t.Errorf("chaos trend:\n%s", trend)
	}

	desc := mustChaos(t, env, "schedule", "describe", "nightly", "--data-dir", data).Stdout
	for _, want := range []string{"every 5s", "paused", "overlap    skip", "catch-up window 1h0m0s", "paired with the previous run", "webhook    " + hookRef + " (expanded from the worker's environment)", "REGRESSION in 1 condition(s) vs " + notice.PreviousRunID} {
		if !strings.Contains(desc, want) {
			t.Errorf("describe lacks %q:\n%s", want, desc)
		}
	}
	if strings.Contains(desc, secret) || strings.Contains(desc, hook.URL) {
		t.Errorf("describe shows the webhook's URL:\n%s", desc)
	}
	list := mustChaos(t, env, "schedule", "list", "--data-dir", data).Stdout
	if !lineWith(list, "nightly", "support-ticket", "every 5s", "paused") {
		t.Errorf("list:\n%s", list)
	}
	checkScheduledHistory(t, addr, notice.RunID)
	checkWebhookKeptAsReference(t, addr, notice.RunID, hookRef)
	checkNotWritten(t, secret, hookRef, notice.RunID, results, data, runs)

	mustChaos(t, env, "schedule", "delete", "nightly", "--data-dir", data)
	oneClearLine(t, chaos(t, env, "schedule", "describe", "nightly", "--data-dir", data), "no schedule nightly")
}

// checkWebhookKeptAsReference reads what Temporal keeps of the webhook: the schedule's
// action, and in the history of the scheduled run that posted runID's regression the
// workflow's input and PostWebhook's. Each must be the reference ref.
func checkWebhookKeptAsReference(t *testing.T, addr, runID, ref string) {
	t.Helper()
	c := testkit.DialTemporal(t, addr)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dc := converter.GetDefaultDataConverter()

	d, err := c.ScheduleClient().GetHandle(ctx, workflows.ScheduleID("nightly")).Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	action, ok := d.Schedule.Action.(*client.ScheduleWorkflowAction)
	if !ok || len(action.Args) != 1 {
		t.Fatalf("the schedule's action is %#v", d.Schedule.Action)
	}
	var scheduled workflows.ScheduledRunInput
	if p, ok := action.Args[0].(*commonpb.Payload); !ok || dc.FromPayload(p, &scheduled) != nil {
		t.Fatalf("the schedule's action argument %#v", action.Args[0])
	}
	if scheduled.Webhook != ref {
		t.Errorf("the schedule keeps the webhook %q, want the reference %q", scheduled.Webhook, ref)
	}

	list, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: "WorkflowType = 'ScheduledRunWorkflow' AND ExecutionStatus = 'Completed'"})
	if err != nil {
		t.Fatal(err)
	}
	var started, posted []string
	for _, e := range list.Executions {
		var res workflows.ScheduledRunResult
		if c.GetWorkflow(ctx, e.Execution.WorkflowId, e.Execution.RunId).Get(ctx, &res) != nil || res.RunID != runID {
			continue
		}
		if res.Note != "" && strings.Contains(res.Note, "webhook") {
			t.Errorf("run %s: %s", runID, res.Note)
		}
		it := c.GetWorkflowHistory(ctx, e.Execution.WorkflowId, e.Execution.RunId, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			if a := ev.GetWorkflowExecutionStartedEventAttributes(); a != nil {
				var in workflows.ScheduledRunInput
				if err := dc.FromPayloads(a.GetInput(), &in); err != nil {
					t.Fatal(err)
				}
				started = append(started, in.Webhook)
			}
			if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "PostWebhook" {
				var in activities.WebhookInput
				if err := dc.FromPayloads(a.GetInput(), &in); err != nil {
					t.Fatal(err)
				}
				posted = append(posted, in.URL)
			}
		}
	}
	if len(started) != 1 || started[0] != ref || len(posted) != 1 || posted[0] != ref {
		t.Errorf("run %s's history keeps the webhook as %q (workflow input) and %q (PostWebhook input), want the reference %q in each", runID, started, posted, ref)
	}
}

// checkNotWritten looks for secret, byte for byte, in every file under dirs and in the
// files of the PostgreSQL cluster that holds the results database. So that a miss means
// something, each place must hold a string that is known to be written there: ref (the
// webhook as the schedule keeps it) under the first of dirs, the Temporal database, and
// runID in the cluster.
func checkNotWritten(t *testing.T, secret, ref, runID, resultsURL string, dirs ...string) {
	t.Helper()
	var pgData string
	query(t, resultsURL, "SHOW data_directory", &pgData)
	// Written to the table files too, not only the WAL.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, resultsURL)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(ctx, "CHECKPOINT")
	conn.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	scan := func(root string, known string) {
		t.Helper()
		files, sawKnown := 0, false
		err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil // a file PostgreSQL removed meanwhile
				}
				return err
			}
			if !e.Type().IsRegular() {
				return nil
			}
			b, err := os.ReadFile(path)
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil {
				return err
			}
			files++
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("%s holds the webhook's URL", path)
			}
			sawKnown = sawKnown || (known != "" && bytes.Contains(b, []byte(known)))
			return nil
		})
		if err != nil {
			t.Fatalf("look through %s: %v", root, err)
		}
		if files == 0 || (known != "" && !sawKnown) {
			t.Errorf("%s: %d files, none holding %q: the search would not see the URL either", root, files, known)
		}
	}
	for i, dir := range dirs {
		known := ""
		if i == 0 {
			known = ref
		}
		scan(dir, known)
	}
	scan(pgData, runID)
}
