package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/trial"
)

// writeRunFolder writes the manifest.json and verdicts.json of a run whose trials of one
// condition have the given verdicts, seeds 100, 101, ...
func writeRunFolder(t *testing.T, id string, seedBase int64, verdicts ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), id)
	var rs []run.TrialResult
	for i, v := range verdicts {
		rs = append(rs, run.TrialResult{ID: fmt.Sprintf("main/phantom_success@save/%d", i+1), Cell: "main", Condition: "phantom_success@save",
			Rep: i + 1, Seed: seedBase + int64(i), Outcome: run.OutcomeCompleted, Verdict: v, SuccessPossible: true})
	}
	for name, v := range map[string]any{
		"manifest.json": map[string]any{"run_id": id, "spec": map[string]string{"name": "s"}, "conditions": []string{"phantom_success@save"}},
		"verdicts.json": rs,
	} {
		b, _ := json.Marshal(v)
		if err := trial.WriteFileAtomic(filepath.Join(dir, name), b); err != nil {
			t.Fatal(err)
		}
	}
	if err := trial.WriteFileAtomic(filepath.Join(dir, "summary.txt"), []byte("run "+id+"\n")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func repeat(v string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func TestCompareScheduledRun(t *testing.T) {
	a := &Activities{}
	ctx := context.Background()
	prev := writeRunFolder(t, "prev", 100, repeat(report.ReportedHonestly, 6)...)

	t.Run("a regression is marked in the summary and comparison.json", func(t *testing.T) {
		cur := writeRunFolder(t, "cur", 100, repeat(report.SilentWrong, 6)...)
		in := CompareInput{Schedule: "nightly", RunID: "cur", OutDir: cur, PreviousRunID: "prev", PreviousDir: prev, Paired: true}
		var cmp Comparison
		var err error
		for i := 0; i < 2; i++ { // a retried activity writes the same section once
			if cmp, err = a.CompareScheduledRun(ctx, in); err != nil {
				t.Fatal(err)
			}
		}
		if len(cmp.Regressions) != 1 || cmp.Regressions[0].Worse != 6 || !strings.Contains(cmp.Method, "McNemar") {
			t.Fatalf("comparison %+v, want one paired regression (6 worse)", cmp)
		}
		summary := readFile(t, filepath.Join(cur, "summary.txt"))
		if n := strings.Count(summary, "--- compared with the previous run of schedule nightly"); n != 1 {
			t.Errorf("%d comparison sections in summary.txt, want 1:\n%s", n, summary)
		}
		for _, want := range []string{"REGRESSION: 1 condition(s) got significantly worse", "WORSE (regression)", "0/6 = 0%", "6/6 = 100%"} {
			if !strings.Contains(summary, want) {
				t.Errorf("summary.txt lacks %q:\n%s", want, summary)
			}
		}
		var saved Comparison
		if err := json.Unmarshal([]byte(readFile(t, filepath.Join(cur, "comparison.json"))), &saved); err != nil || len(saved.Regressions) != 1 || saved.Schedule != "nightly" {
			t.Errorf("comparison.json: %+v, %v", saved, err)
		}
	})

	t.Run("no shared seeds: compared unpaired, said so", func(t *testing.T) {
		cur := writeRunFolder(t, "cur", 900, repeat(report.SilentWrong, 6)...)
		cmp, err := a.CompareScheduledRun(ctx, CompareInput{Schedule: "nightly", RunID: "cur", OutDir: cur, PreviousRunID: "prev", PreviousDir: prev, Paired: true})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(cmp.Note, "share no seeds") || !strings.Contains(cmp.Method, "Fisher") || len(cmp.Regressions) != 1 {
			t.Errorf("comparison %+v", cmp)
		}
	})

	t.Run("the same behaviour is no regression", func(t *testing.T) {
		cur := writeRunFolder(t, "cur", 100, repeat(report.ReportedHonestly, 6)...)
		cmp, err := a.CompareScheduledRun(ctx, CompareInput{Schedule: "nightly", RunID: "cur", OutDir: cur, PreviousRunID: "prev", PreviousDir: prev, Paired: true})
		if err != nil || len(cmp.Regressions) != 0 || len(cmp.Rows) != 1 || cmp.Rows[0].Call != "same" {
			t.Fatalf("comparison %+v, %v", cmp, err)
		}
		if s := readFile(t, filepath.Join(cur, "summary.txt")); !strings.Contains(s, "no regression") {
			t.Errorf("summary.txt:\n%s", s)
		}
	})

	t.Run("the first run of a schedule", func(t *testing.T) {
		cur := writeRunFolder(t, "cur", 100, report.Correct)
		cmp, err := a.CompareScheduledRun(ctx, CompareInput{Schedule: "nightly", RunID: "cur", OutDir: cur})
		if err != nil || !strings.Contains(cmp.Note, "first run") || len(cmp.Rows) != 0 {
			t.Fatalf("comparison %+v, %v", cmp, err)
		}
	})

	t.Run("a previous run that is gone", func(t *testing.T) {
		cur := writeRunFolder(t, "cur", 100, report.Correct)
		cmp, err := a.CompareScheduledRun(ctx, CompareInput{Schedule: "nightly", RunID: "cur", OutDir: cur, PreviousRunID: "gone", PreviousDir: filepath.Join(t.TempDir(), "gone")})
		if err != nil || !strings.Contains(cmp.Note, "not compared: the previous run gone cannot be read") {
			t.Fatalf("comparison %+v, %v", cmp, err)
		}
	})
}

func TestPostWebhook(t *testing.T) {
	var got RegressionNotice
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("content type %q", r.Header.Get("Content-Type"))
		}
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &got)
		w.WriteHeader(status)
		if status == http.StatusOK {
			fmt.Fprint(w, "thanks")
			return
		}
		// A receiver that echoes what it refused, the secret in the URL included.
		fmt.Fprintf(w, "no such hook: %s (POST http://%s%s)", r.URL.Path[1:], r.Host, r.URL.RequestURI())
	}))
	defer srv.Close()
	a := &Activities{}
	notice := NewRegressionNotice("nightly", "spec", "run-2", "/runs/run-2", Comparison{PreviousRunID: "run-1", Method: "McNemar",
		Regressions: []report.DiffRow{{Cell: "main", Condition: "clean", A: report.NewRate(0, 6), B: report.NewRate(6, 6), P: 0.031, Call: "worse"}}})
	if err := a.PostWebhook(context.Background(), WebhookInput{URL: srv.URL + "/secret-token", Notice: notice}); err != nil {
		t.Fatal(err)
	}
	if got.RunID != "run-2" || got.PreviousRunID != "run-1" || len(got.Regressions) != 1 || !strings.Contains(got.Text, "main clean: 0/6 = 0%") {
		t.Errorf("posted %+v", got)
	}
	status = http.StatusInternalServerError
	err := a.PostWebhook(context.Background(), WebhookInput{URL: srv.URL + "/secret-token", Notice: notice})
	if err == nil || !strings.Contains(err.Error(), "500") || strings.Contains(err.Error(), "secret-token") || !strings.Contains(err.Error(), "no such hook: <hidden>") {
		t.Errorf("error %v: want the status and the answer, without the URL's path (the receiver echoed it)", err)
	}
	err = a.PostWebhook(context.Background(), WebhookInput{URL: srv.URL + "/hooks/secret-token?sig=abc123", Notice: notice})
	if err == nil || strings.Contains(err.Error(), "secret-token") || strings.Contains(err.Error(), "abc123") {
		t.Errorf("error %v: want neither the path nor the query the receiver echoed", err)
	}
}

// TestPostWebhookExpandsTheReference: a webhook kept as ${VAR} is expanded from the
// worker's environment when it posts; a variable that is not set (or holds no http(s)
// URL) is a non-retryable error that names the variable, never the value.
func TestPostWebhookExpandsTheReference(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	posted := func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(paths) }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
	}))
	defer srv.Close()
	a := &Activities{}
	notice := RegressionNotice{RunID: "run-2", Text: "regressed"}
	ctx := context.Background()

	t.Setenv("CHAOS_TEST_HOOK", srv.URL+"/services/T0-secret-token")
	if err := a.PostWebhook(ctx, WebhookInput{URL: "${CHAOS_TEST_HOOK}", Notice: notice}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CHAOS_TEST_HOOK_PATH", "T1-secret-token")
	if err := a.PostWebhook(ctx, WebhookInput{URL: srv.URL + "/services/${CHAOS_TEST_HOOK_PATH}", Notice: notice}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(posted(), " "); got != "/services/T0-secret-token /services/T1-secret-token" {
		t.Errorf("posted to %q, want the expanded paths", got)
	}

	for _, tc := range []struct {
		name, value, want string
		set               bool
	}{
		{"unset", "", "the environment variable CHAOS_TEST_UNSET_HOOK is not set on this worker", false},
		{"not a URL", "ftp://hooks.example.com/T2-secret-token", "${CHAOS_TEST_UNSET_HOOK}, and on this worker that is not an http:// or https:// URL", true},
		{"empty", "", "not an http:// or https:// URL", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.set {
				t.Setenv("CHAOS_TEST_UNSET_HOOK", tc.value)
			} else {
				t.Setenv("CHAOS_TEST_UNSET_HOOK", "") // restored after the test
				os.Unsetenv("CHAOS_TEST_UNSET_HOOK")
			}
			n := len(posted())
			err := a.PostWebhook(ctx, WebhookInput{URL: "${CHAOS_TEST_UNSET_HOOK}", Notice: notice})
			var appErr *temporal.ApplicationError
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if !errors.As(err, &appErr) || !appErr.NonRetryable() || appErr.Type() != ErrBadInput {
				t.Errorf("error %v: want a non-retryable %s error", err, ErrBadInput)
			}
			if strings.Contains(err.Error(), "secret-token") {
				t.Errorf("error %v shows the variable's value", err)
			}
			if len(posted()) != n {
				t.Errorf("posted although the webhook is not usable")
			}
		})
	}

	// A literal URL that does not parse: the message does not quote it.
	err := a.PostWebhook(ctx, WebhookInput{URL: "http://[::1%zz]/T3-secret-token", Notice: notice})
	if err == nil || strings.Contains(err.Error(), "secret-token") {
		t.Errorf("error %v: want one that does not quote the URL", err)
	}
}

func TestSetSummarySection(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "summary.txt"), []byte("table\n"), 0o644)
	setSummarySection(dir, "a", "first")
	setSummarySection(dir, "b", "second")
	setSummarySection(dir, "a", "first again")
	want := "table\n\n--- b\nsecond\n\n--- a\nfirst again\n"
	if got := readFile(t, filepath.Join(dir, "summary.txt")); got != want {
		t.Errorf("summary.txt = %q, want %q", got, want)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
