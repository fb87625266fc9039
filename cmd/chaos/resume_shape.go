package main

import (
	"context"
	"errors"
	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/crashwall/chaos/run"
)

// checkShape refuses to resume a run whose workflows have another shape than this
// binary's (run.Shape): their history would not replay here, and its trials would stand
// still. It reads the shape from the start of the run's current workflow run.
func checkShape(ctx context.Context, c client.Client, namespace, runID, workflowID, workflowRunID string) error {
	resp, err := c.WorkflowService().GetWorkflowExecutionHistory(ctx, &workflowservice.GetWorkflowExecutionHistoryRequest{
		Namespace:              namespace,
		Execution:              &commonpb.WorkflowExecution{WorkflowId: workflowID, RunId: workflowRunID},
		MaximumPageSize:        1,
		HistoryEventFilterType: enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT,
	})
	if err != nil {
		return fmt.Errorf("resume %s: read the start of its workflow: %w", runID, err)
	}
	var first *historypb.HistoryEvent
	if events := resp.GetHistory().GetEvents(); len(events) > 0 {
		first = events[0]
	}
	shape, err := experimentShape(first)
	if err != nil {
		return fmt.Errorf("resume %s: %w", runID, err)
	}
	return refuseShape(runID, shape)
}

// refuseShape is the one-line refusal of a run of another shape (nil for this binary's).
func refuseShape(runID string, shape int) error {
	if shape == run.Shape {
		return nil
	}
	return badInput(fmt.Errorf("run %s was started by another chaos (workflow shape %d; this one runs shape %d) and cannot be resumed by it: abort it (chaos abort %s) and start it again with chaos run",
		runID, shape, run.Shape, runID))
}

// experimentShape is the shape of the run an ExperimentWorkflow's first event started
// (0: a run from before shapes were numbered).
func experimentShape(first *historypb.HistoryEvent) (int, error) {
	started := first.GetWorkflowExecutionStartedEventAttributes()
	if started == nil {
		return 0, errors.New("its workflow's history does not begin with its start")
	}
	var in run.ExperimentInput
	if err := converter.GetDefaultDataConverter().FromPayloads(started.GetInput(), &in); err != nil {
		return 0, fmt.Errorf("read its workflow's input: %w", err)
	}
	return in.Shape, nil
}
