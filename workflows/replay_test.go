package workflows

import (
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/worker"
)

// TestReplay replays histories recorded from real runs on the embedded server (see
// tests/run: go test ./tests/run -run TestRecordHistories -update-histories): one run of
// the current shape (its experiment's and its batch's) and a scheduled run. A change to a
// workflow that alters its commands fails here: record the histories again and bump
// run.Shape, so that chaos resume refuses runs of the shape before (until chaos has a
// release, no workflow.GetVersion).
func TestReplay(t *testing.T) {
	files, err := filepath.Glob("testdata/*.history.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no recorded histories in workflows/testdata: record them with go test ./tests/run -run TestRecordHistories -update-histories")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflow(ExperimentWorkflow)
			r.RegisterWorkflow(TrialBatchWorkflow)
			// scheduled.history.json: go test ./tests/store -run TestScheduleFindsARegression -update-histories
			r.RegisterWorkflow(ScheduledRunWorkflow)
			if err := r.ReplayWorkflowHistoryFromJSONFile(nil, f); err != nil {
				t.Fatalf("replay %s: %v", f, err)
			}
		})
	}
}
