package run_test

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/tests/testkit"
)

// TestWebUI starts `chaos server` with its web UI on a free port, runs a small experiment
// on it, and finds the run in the UI's API and in `chaos runs`, and its trials' steps in
// the run's history, named by trial (trials run inline: no workflow of their own).
func TestWebUI(t *testing.T) {
	env := testkit.Env(t)
	data, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
	srv := startServer(t, env, data, 0)
	if srv.UI == "" {
		t.Fatalf("chaos server printed no web UI address:\n%s", srv.Stdout)
	}
	if code, body := get(t, srv.UI); code != http.StatusOK {
		t.Fatalf("GET %s: %d\n%s", srv.UI, code, body)
	}

	conds := []string{"clean"}
	r := runChaos(t, env, runTimeout, "run", exampleSpec, "--temporal", srv.Addr, "--data-dir", data, "--out", out,
		"--reps", "1", "--only", strings.Join(conds, ","), "--", blindAgent())
	r.MustSucceed(t, "chaos run --temporal")
	runID := runIDOf(t, r.Stdout)
	experiment := run.ExperimentWorkflowID(runID)

	type execution struct {
		Execution struct {
			WorkflowID string `json:"workflowId"`
		} `json:"execution"`
		Type struct {
			Name string `json:"name"`
		} `json:"type"`
		ParentExecution *struct {
			WorkflowID string `json:"workflowId"`
		} `json:"parentExecution"`
	}
	api := srv.UI + "/api/v1/namespaces/default/workflows"
	want := map[string]string{experiment: "ExperimentWorkflow"}
	var missing []string
	// Visibility is written just after the workflows close.
	testkit.WaitFor(t, 5*time.Minute, "the run's workflows in "+api, func() bool {
		code, body := get(t, api)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d\n%s", api, code, body)
		}
		var list struct {
			Executions []execution `json:"executions"`
		}
		if err := json.Unmarshal([]byte(body), &list); err != nil {
			t.Fatalf("GET %s: %v\n%s", api, err, body)
		}
		got := map[string]execution{}
		for _, e := range list.Executions {
			got[e.Execution.WorkflowID] = e
		}
		missing = nil
		for id, typ := range want {
			e, ok := got[id]
			switch {
			case !ok:
				missing = append(missing, id+" is not listed")
			case e.Type.Name != typ:
				t.Fatalf("%s is a %s, want %s", id, e.Type.Name, typ)
			}
		}
		for id, e := range got {
			if e.ParentExecution != nil && e.ParentExecution.WorkflowID == experiment && e.Type.Name != "TrialBatchWorkflow" {
				t.Fatalf("%s is a child workflow of the run (%s): a run's only children are its batches of trials", id, e.Type.Name)
			}
		}
		return len(missing) == 0
	})
	c := testkit.DialTemporal(t, srv.Addr)
	defer c.Close()
	steps := map[string]bool{}
	for _, sp := range inlineSpans(fetchHistory(t, c, run.TrialBatchWorkflowID(runID, 0)).Events) {
		steps[sp.id] = sp.activities > 0
	}
	for _, id := range trialIDs(exampleCells(t), conds) {
		if !steps[id] {
			t.Errorf("trial %s has no step in the run's history (trials seen: %v)", id, steps)
		}
	}

	runs := runChaos(t, env, time.Minute, "runs", "--temporal", srv.Addr, "--data-dir", data)
	runs.MustSucceed(t, "chaos runs")
	if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(runID) + ` +support-ticket +completed `).MatchString(runs.Stdout) {
		t.Errorf("chaos runs does not list run %s of spec support-ticket as completed:\n%s", runID, runs.Stdout)
	}
}

// get fetches url and returns the status code and the body.
func get(t testing.TB, url string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, string(b)
}
