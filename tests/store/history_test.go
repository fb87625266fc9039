package store_test

import (
	"context"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/crashwall/chaos/tests/testkit"
	"github.com/crashwall/chaos/workflows"
)

var updateHistories = flag.Bool("update-histories", false, "rewrite workflows/testdata/scheduled.history.json from the schedule test's regressed run")

// checkScheduledHistory replays the history of the scheduled run that produced runID (a
// change that breaks determinism fails here) and, with -update-histories, keeps it in
// workflows/testdata for workflows.TestReplay.
func checkScheduledHistory(t *testing.T, addr, runID string) {
	t.Helper()
	c := testkit.DialTemporal(t, addr)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	list, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: "WorkflowType = 'ScheduledRunWorkflow' AND ExecutionStatus = 'Completed'"})
	if err != nil {
		t.Fatal(err)
	}
	var hist *historypb.History
	for _, e := range list.Executions {
		var res workflows.ScheduledRunResult
		if c.GetWorkflow(ctx, e.Execution.WorkflowId, e.Execution.RunId).Get(ctx, &res) != nil || res.RunID != runID {
			continue
		}
		hist = &historypb.History{}
		it := c.GetWorkflowHistory(ctx, e.Execution.WorkflowId, e.Execution.RunId, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			hist.Events = append(hist.Events, ev)
		}
	}
	if hist == nil {
		t.Fatalf("no completed ScheduledRunWorkflow ran %s", runID)
	}
	quiet := sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)) // a failed replay is in its error
	replayer := worker.NewWorkflowReplayer()
	replayer.RegisterWorkflow(workflows.ScheduledRunWorkflow)
	replayer.RegisterWorkflow(workflows.ExperimentWorkflow)
	if err := replayer.ReplayWorkflowHistory(quiet, hist); err != nil {
		t.Fatalf("replay the scheduled run: %v", err)
	}
	if !*updateHistories {
		return
	}
	b, err := protojson.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(hist)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "..", "workflows", "testdata", "scheduled.history.json")
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d events)", path, len(hist.Events))
}
