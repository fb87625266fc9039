package run_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/tests/testkit"
	"github.com/crashwall/chaos/workflows"
)

// historiesDir is where workflows/replay_test.go finds the recorded histories.
const historiesDir = "../../workflows/testdata"

// TestRecordHistories runs a small experiment on the embedded server (clean and
// phantom_success, blind agent) and replays the histories of its ExperimentWorkflow and
// its TrialBatchWorkflow with the workflows of this tree: the code replays what it writes.
// With -update-histories it also writes them, in the JSON of `temporal workflow show
// --output json`, to workflows/testdata, where TestReplay keeps later changes honest.
func TestRecordHistories(t *testing.T) {
	env := testkit.Env(t)
	data, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
	srv := startServer(t, env, data, -1)
	conds := []string{"clean", "phantom_success@update_ticket"}
	r := runChaos(t, env, runTimeout, "run", exampleSpec, "--temporal", srv.Addr, "--data-dir", data, "--out", out,
		"--reps", "1", "--only", strings.Join(conds, ","), "--", blindAgent())
	r.MustSucceed(t, "chaos run --temporal")
	runID := runIDOf(t, r.Stdout)

	c := testkit.DialTemporal(t, srv.Addr)
	defer c.Close()
	// The run's two workflows: the experiment, and the one batch that ran both trials
	// (each one RunTrial, workflows/trial.go).
	histories := []struct{ file, workflowID string }{
		{"experiment.history.json", run.ExperimentWorkflowID(runID)},
		{"batch.history.json", run.TrialBatchWorkflowID(runID, 0)},
	}
	for _, h := range histories {
		t.Run(h.file, func(t *testing.T) {
			hist := fetchHistory(t, c, h.workflowID)
			quiet := sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)) // a failed replay is in its error
			replayer := worker.NewWorkflowReplayer()
			replayer.RegisterWorkflow(workflows.ExperimentWorkflow)
			replayer.RegisterWorkflow(workflows.TrialBatchWorkflow)
			if err := replayer.ReplayWorkflowHistory(quiet, hist); err != nil {
				t.Fatalf("replay the history of %s: %v", h.workflowID, err)
			}
			if !*updateHistories {
				return
			}
			b, err := protojson.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(hist)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(historiesDir, 0o755); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(historiesDir, h.file)
			if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
			// What TestReplay reads back must replay too.
			if err := replayer.ReplayWorkflowHistoryFromJSONFile(quiet, path); err != nil {
				t.Fatalf("replay %s: %v", path, err)
			}
			t.Logf("wrote %s (%d events)", path, len(hist.Events))
		})
	}
}

// fetchHistory is every event of the latest run of the workflow.
func fetchHistory(t testing.TB, c client.Client, workflowID string) *historypb.History {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	it := c.GetWorkflowHistory(ctx, workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	hist := &historypb.History{}
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatalf("history of %s: %v", workflowID, err)
		}
		hist.Events = append(hist.Events, e)
	}
	if n := len(hist.Events); n == 0 || hist.Events[n-1].GetEventType() != enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED {
		t.Fatalf("the history of %s does not end with its completion (%d events)", workflowID, n)
	}
	return hist
}
