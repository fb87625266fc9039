//go:build !noserver

package worker

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/crashwall/chaos/tests/fixture"
)

// TestVisibilityIndexes: the embedded server's database has none of the unused
// visibility indexes and all the others, and a list filtered by an attribute whose
// index was dropped (HistoryLength) or kept (WorkflowType) still finds a workflow.
func TestVisibilityIndexes(t *testing.T) {
	dataDir := t.TempDir()
	s := startTestServer(t, ServerConfig{DataDir: dataDir, UIPort: NoUI})

	db, err := sql.Open("sqlite", "file:"+filepath.Join(dataDir, dbFileName)+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'executions_visibility' AND sql IS NOT NULL")
	if err != nil {
		t.Fatal(err)
	}
	var have []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		have = append(have, name)
	}
	rows.Close()
	for _, name := range unusedVisibilityIndexes {
		if slices.Contains(have, name) {
			t.Errorf("index %s is still there", name)
		}
	}
	for _, name := range []string{"default_idx", "by_workflow_type", "by_status", "by_workflow_id", "by_temporal_namespace_division"} {
		if !slices.Contains(have, name) {
			t.Errorf("index %s was dropped; indexes: %v", name, have)
		}
	}
	if len(have)+len(unusedVisibilityIndexes) != 58 { // Temporal's schema has 58
		t.Errorf("%d indexes left and %d dropped, want 58 in all: %v", len(have), len(unusedVisibilityIndexes), have)
	}

	c := dialTestClient(t, s.FrontendAddr())
	w := sdkworker.New(c, testTaskQueue, sdkworker.Options{})
	w.RegisterWorkflow(greetWorkflow)
	w.RegisterActivity(greetActivity)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute) // a hang guard
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "greet-vis", TaskQueue: testTaskQueue}, greetWorkflow, "chaos")
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"HistoryLength > 3", "WorkflowType = 'greetWorkflow' AND ExecutionStatus = 'Completed'"} {
		var resp *workflowservice.ListWorkflowExecutionsResponse
		found := fixture.Until(t, 0, func() bool {
			var err error
			resp, err = c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: q})
			if err != nil {
				t.Fatalf("list %q: %v", q, err)
			}
			return len(resp.Executions) == 1 && resp.Executions[0].Execution.WorkflowId == "greet-vis"
		})
		if !found {
			t.Fatalf("list %q never found greet-vis (last: %v)", q, resp.Executions)
		}
	}
}
