package workflows

import (
	"fmt"
	"sort"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// ExperimentWorkflow runs a planned experiment: TrialWorkflow children, at most
// Plan.Concurrency at a time, then the Aggregate activity. It answers the "progress"
// query and takes an "abort" signal (no new trials; running ones are cancelled and torn
// down). After HistoryLimit trials it continues as new, carrying the results so far.
func ExperimentWorkflow(ctx workflow.Context, in ExperimentInput) (ExperimentResult, error) {
	logger := workflow.GetLogger(ctx)
	total := len(in.Plan.Trials)
	limit := in.HistoryLimit
	if limit <= 0 {
		limit = DefaultHistoryLimit
	}
	concurrency := max(in.Plan.Concurrency, 1)

	results := append([]TrialResult(nil), in.Results...)
	next := in.Next
	aborted := in.Aborted
	neverArmed := ""
	running := 0

	if err := workflow.SetQueryHandler(ctx, QueryProgress, func() (Progress, error) {
		p := Progress{Total: total, Done: len(results), Running: running, ByOutcome: map[string]int{}, Aborted: aborted}
		for _, r := range results {
			key := r.Outcome
			if r.Verdict != "" {
				key = r.Verdict
			}
			p.ByOutcome[key]++
		}
		return p, nil
	}); err != nil {
		return ExperimentResult{}, err
	}

	childCtx, cancelChildren := workflow.WithCancel(ctx)
	abortCh := workflow.GetSignalChannel(ctx, SignalAbort)
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(abortCh, func(c workflow.ReceiveChannel, _ bool) {
		var reason string
		c.Receive(ctx, &reason)
		if reason == "" {
			reason = "aborted"
		}
		if aborted == "" {
			aborted = reason
			logger.Info("run aborted", "reason", reason)
			cancelChildren()
		}
	})

	startedHere := 0
	start := func(i int) {
		t := in.Plan.Trials[i]
		cctx := workflow.WithChildOptions(childCtx, workflow.ChildWorkflowOptions{
			WorkflowID:            TrialWorkflowID(in.RunID, t.ID),
			WorkflowIDReusePolicy: enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
			ParentClosePolicy:     enums.PARENT_CLOSE_POLICY_REQUEST_CANCEL,
			WaitForCancellation:   true,
			RetryPolicy:           &temporal.RetryPolicy{MaximumAttempts: 3, InitialInterval: time.Second},
		})
		fut := workflow.ExecuteChildWorkflow(cctx, TrialWorkflow, TrialInput{
			RunID: in.RunID, OutDir: in.OutDir, Spec: in.Spec, Trial: t, AgentCommand: in.AgentCommand,
			AgentTimeout: in.AgentTimeout,
		})
		running++
		startedHere++
		sel.AddFuture(fut, func(f workflow.Future) {
			running--
			var r TrialResult
			if err := f.Get(ctx, &r); err != nil {
				r = TrialResult{ID: t.ID, Cell: t.Cell, Condition: t.Condition, Rep: t.Rep, Seed: t.Seed, Outcome: OutcomeFailed, Reason: "trial workflow: " + err.Error()}
				if aborted != "" {
					r.Outcome, r.Reason = OutcomeAborted, aborted
				}
			}
			results = append(results, r)
			if r.Model != nil && r.Model.NeverCalled && aborted == "" &&
				workflow.GetVersion(ctx, versionStopNeverArmed, workflow.DefaultVersion, 1) == 1 {
				// The agent ran to its end without calling {llm_url}: the model fault can
				// never be armed in this run, so every further trial would be wasted.
				neverArmed = fmt.Sprintf("trial %s ran to its end with no model call at the model proxy, so model fault %s can never be armed in this run", r.ID, r.Model.Fault)
				aborted = neverArmed
				logger.Error("run stopped: model fault never armed", "trial", r.ID, "fault", r.Model.Fault, "proxy", r.Model.Proxy)
				cancelChildren()
			}
		})
	}

	for {
		for aborted == "" && running < concurrency && next < total && startedHere < limit {
			start(next)
			next++
		}
		if running == 0 {
			break
		}
		sel.Select(ctx)
	}

	if aborted == "" && next < total {
		// The history is getting long: carry on in a fresh run of this workflow.
		in.Next, in.Results, in.Aborted = next, results, aborted
		return ExperimentResult{}, workflow.NewContinueAsNewError(ctx, ExperimentWorkflow, in)
	}

	// Trials never started after an abort are recorded as aborted, so every planned trial
	// appears once in the results.
	for ; next < total && aborted != ""; next++ {
		t := in.Plan.Trials[next]
		results = append(results, TrialResult{ID: t.ID, Cell: t.Cell, Condition: t.Condition, Rep: t.Rep, Seed: t.Seed, Outcome: OutcomeAborted, Reason: "not started: " + aborted})
	}
	sort.Slice(results, func(i, j int) bool { return results[i].ID < results[j].ID })

	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 5 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 5},
	})
	if aborted != "" {
		actx, _ = workflow.NewDisconnectedContext(actx)
	}
	var summary Summary
	err := workflow.ExecuteActivity(actx, a.Aggregate, AggregateInput{
		RunID: in.RunID, OutDir: in.OutDir, Spec: in.Spec, Plan: in.Plan, Started: in.Started,
		Results: results, Aborted: aborted, AgentCommand: in.AgentCommand,
	}).Get(actx, &summary)
	if err != nil {
		return ExperimentResult{}, err
	}
	return ExperimentResult{RunID: in.RunID, OutDir: in.OutDir, Results: results, Summary: summary, Aborted: aborted, NeverArmed: neverArmed}, nil
}

// versionStopNeverArmed guards stopping the run at the first trial that proves its model
// fault can never be armed (runs started before it ran every trial).
const versionStopNeverArmed = "stop-never-armed"
