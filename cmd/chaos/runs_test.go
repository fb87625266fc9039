package main

import (
	"testing"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/crashwall/chaos/run"
)

// orphaned decides what chaos runs and chaos abort say of a run: only a running run on an
// embedded run's own queue that no live chaos run owns has nobody to run its trials.
func TestOrphaned(t *testing.T) {
	running, done := enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED
	mine, other := run.EmbeddedTaskQueue("r1"), run.EmbeddedTaskQueue("r2")
	tests := []struct {
		name   string
		status enumspb.WorkflowExecutionStatus
		queue  string
		live   string
		want   bool
	}{
		{"its chaos run died, nothing lives on the data directory", running, mine, "", true},
		{"its chaos run died, another run owns the server", running, mine, other, true},
		{"its chaos run is alive", running, mine, mine, false},
		{"finished", done, mine, "", false},
		{"submitted to a chaos server, whose worker runs it", running, run.TaskQueue, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := orphaned(tt.status, tt.queue, tt.live); got != tt.want {
				t.Errorf("orphaned(%s, %q, %q) = %v, want %v", tt.status, tt.queue, tt.live, got, tt.want)
			}
		})
	}
}
