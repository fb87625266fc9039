package main

import (
	"strings"
	"testing"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"

	"github.com/crashwall/chaos/run"
)

// chaos resume reads the shape a run was started with from its workflow's first event and
// refuses, in one line and exit 1, a run of another shape (an older binary's: no shape).
func TestResumeRefusesAnotherShape(t *testing.T) {
	started := func(in any) *historypb.HistoryEvent {
		p, err := converter.GetDefaultDataConverter().ToPayloads(in)
		if err != nil {
			t.Fatal(err)
		}
		return &historypb.HistoryEvent{Attributes: &historypb.HistoryEvent_WorkflowExecutionStartedEventAttributes{
			WorkflowExecutionStartedEventAttributes: &historypb.WorkflowExecutionStartedEventAttributes{Input: p}}}
	}
	// A run from before shapes: its input has no "shape".
	older := started(map[string]any{"run_id": "r1", "next": 3, "results": []any{}})
	current := started(run.ExperimentInput{RunID: "r2", Shape: run.Shape})
	for _, c := range []struct {
		name  string
		event *historypb.HistoryEvent
		shape int
		ok    bool
	}{
		{"older", older, 0, false},
		{"current", current, run.Shape, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			shape, err := experimentShape(c.event)
			if err != nil || shape != c.shape {
				t.Fatalf("shape %d, %v; want %d", shape, err, c.shape)
			}
			err = refuseShape("r1", shape)
			if c.ok {
				if err != nil {
					t.Fatalf("refused a run of this binary's shape: %v", err)
				}
				return
			}
			if err == nil || ExitCode(err) != ExitBadInput || strings.Contains(err.Error(), "\n") ||
				!strings.Contains(err.Error(), "run r1 was started by another chaos (workflow shape 0") || !strings.Contains(err.Error(), "chaos abort r1") {
				t.Fatalf("refusal %v (exit %d); want one line, exit %d, naming the run and what to do", err, ExitCode(err), ExitBadInput)
			}
		})
	}
	if _, err := experimentShape(&historypb.HistoryEvent{}); err == nil {
		t.Error("a history that does not begin with a start gave a shape")
	}
}
