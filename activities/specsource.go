package activities

import (
	"context"
	"errors"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"

	commonpb "go.temporal.io/api/common/v1"

	"github.com/crashwall/chaos/run"
)

// A trial's input carries its spec without the text (run.TrialBatchInput.TrialInput): the
// text is in the history once, in the start of the batch that runs the trial, so every
// trial's input is the same small size whatever the spec's. A worker reads it from there
// the first time it runs a trial of the run, and keeps it (a few runs' worth) for the
// others; a worker on another host needs nothing but the Temporal server for it.

// specsKept is how many runs' spec texts a worker keeps.
const specsKept = 16

// withSpecText returns in with its spec's text: as given, kept from an earlier trial of
// the run, or read from the start of the workflow that scheduled this activity.
func (a *Activities) withSpecText(ctx context.Context, in run.TrialInput) (run.TrialInput, error) {
	if len(in.Spec.YAML) > 0 {
		return in, nil
	}
	if y := a.keptSpec(in.RunID); y != nil {
		in.Spec.YAML = y
		return in, nil
	}
	if !activity.IsActivity(ctx) || a.Client == nil {
		return in, badInput(fmt.Errorf("the trial carries no spec text (spec %q) and this worker has no Temporal client to read it from the run", in.Spec.Name))
	}
	info := activity.GetInfo(ctx)
	y, err := a.readSpecText(ctx, info.WorkflowNamespace, info.WorkflowExecution.ID, info.WorkflowExecution.RunID)
	if err != nil {
		return in, fmt.Errorf("read the spec of run %s from the start of workflow %s: %w", in.RunID, info.WorkflowExecution.ID, err)
	}
	a.keepSpec(in.RunID, y)
	in.Spec.YAML = y
	return in, nil
}

// readSpecText reads the spec's text from the first event of a batch's history: its start,
// whose input is a run.TrialBatchInput.
func (a *Activities) readSpecText(ctx context.Context, namespace, workflowID, runID string) ([]byte, error) {
	resp, err := a.Client.WorkflowService().GetWorkflowExecutionHistory(ctx, &workflowservice.GetWorkflowExecutionHistoryRequest{
		Namespace:              namespace,
		Execution:              &commonpb.WorkflowExecution{WorkflowId: workflowID, RunId: runID},
		MaximumPageSize:        1,
		HistoryEventFilterType: enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT,
	})
	if err != nil {
		return nil, err
	}
	events := resp.GetHistory().GetEvents()
	if len(events) == 0 || events[0].GetWorkflowExecutionStartedEventAttributes() == nil {
		return nil, errors.New("its history does not begin with its start")
	}
	var batch run.TrialBatchInput
	if err := converter.GetDefaultDataConverter().FromPayloads(events[0].GetWorkflowExecutionStartedEventAttributes().GetInput(), &batch); err != nil {
		return nil, fmt.Errorf("decode its input: %w", err)
	}
	if len(batch.Spec.YAML) == 0 {
		return nil, errors.New("its input has no spec text")
	}
	return batch.Spec.YAML, nil
}

func (a *Activities) keptSpec(runID string) []byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, s := range a.specs {
		if s.runID == runID {
			return s.yaml
		}
	}
	return nil
}

func (a *Activities) keepSpec(runID string, yaml []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.specs = append(a.specs, keptSpec{runID, yaml})
	if len(a.specs) > specsKept {
		a.specs = a.specs[len(a.specs)-specsKept:]
	}
}

type keptSpec struct {
	runID string
	yaml  []byte
}
