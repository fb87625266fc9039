package workflows

import (
	"fmt"
	"maps"
	"sort"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// resultsOnDisk is the workflow.GetVersion change id of leaving trial results in their
// folders (Aggregate reads them there) instead of carrying them in the workflow.
const resultsOnDisk = "results-on-disk"

// ExperimentWorkflow runs a planned experiment: TrialWorkflow children, at most
// Plan.Concurrency at a time, then the Aggregate activity. It answers the "progress"
// query and takes an "abort" signal (no new trials; running ones are cancelled and torn
// down). After HistoryLimit trials it continues as new, carrying the counts so far; the
// results themselves are in the trial folders.
func ExperimentWorkflow(ctx workflow.Context, in ExperimentInput) (ExperimentResult, error) {
	logger := workflow.GetLogger(ctx)
	total := len(in.Plan.Trials)
	limit := in.HistoryLimit
	if limit <= 0 {
		limit = DefaultHistoryLimit
	}
	concurrency := max(in.Plan.Concurrency, 1)

	// Runs started before this change carry every result in the workflow (and hit
	// Temporal's payload limit at about 1,900 trials); since, results stay in the trial
	// folders and the workflow keeps only counts.
	onDisk := workflow.GetVersion(ctx, resultsOnDisk, workflow.DefaultVersion, 1) == 1
	light := workflow.GetVersion(ctx, lightTrial, workflow.DefaultVersion, 1) == 1 // trial_light.go
	localSetUp := light && workflow.GetVersion(ctx, localSetUpTrial, workflow.DefaultVersion, 1) == 1
	inline := localSetUp && workflow.GetVersion(ctx, inlineTrials, workflow.DefaultVersion, 1) == 1 // trial_inline.go
	oneStep := inline && workflow.GetVersion(ctx, oneStepTrials, workflow.DefaultVersion, 1) == 1   // trial_inline.go
	results := append([]TrialResult(nil), in.Results...)
	tally := Tally{Done: in.Tally.Done, By: maps.Clone(in.Tally.By)}
	for _, r := range in.Results {
		tally.Add(r)
	}
	next := in.Next
	aborted := in.Aborted
	neverArmed := ""
	running := 0

	if err := workflow.SetQueryHandler(ctx, QueryProgress, func() (Progress, error) {
		p := Progress{Total: total, Done: tally.Done, Running: running, ByOutcome: maps.Clone(tally.By), Aborted: aborted}
		if p.ByOutcome == nil {
			p.ByOutcome = map[string]int{}
		}
		return p, nil
	}); err != nil {
		return ExperimentResult{}, err
	}

	budget := newBudget(ctx, in)
	childCtx, cancelChildren := workflow.WithCancel(ctx)
	abortCh := workflow.GetSignalChannel(ctx, SignalAbort)
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(abortCh, func(c workflow.ReceiveChannel, _ bool) {
		var reason string
		c.Receive(ctx, &reason)
		if reason == "" {
			reason = "aborted"
		}
		if aborted == "" || aborted == budget.stopped {
			// (A run stopped by its budget lets its running trials finish; an abort
			// still cancels them.)
			aborted = reason
			logger.Info("run aborted", "reason", reason)
			cancelChildren()
		}
	})

	// Results are written in a context an abort does not cancel.
	wctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 5},
	})
	var writes []workflow.Future
	if onDisk {
		// Results carried over from a run of the workflow before this change.
		for _, r := range results {
			if r.Dir == "" {
				writes = append(writes, workflow.ExecuteActivity(wctx, a.RecordResult, RecordResultInput{OutDir: in.OutDir, Result: r}))
			}
		}
		results = nil
	}

	// chaos run --branch (branch.go): clean trials first, fault trials once they are done.
	br := newBranchOrder(ctx, in.Plan)
	startedHere := 0
	start := func(i int) {
		t := in.Plan.Trials[br.trial(i)]
		tin := TrialInput{
			RunID: in.RunID, OutDir: in.OutDir, Spec: in.Spec, Trial: t, AgentCommand: in.AgentCommand,
			AgentTimeout: in.AgentTimeout, HeartbeatTimeout: in.HeartbeatTimeout, Light: light, LocalSetUp: localSetUp, BranchFrom: br.from(t),
		}
		var fut workflow.Future
		if inline {
			tin.AbortSignal = TrialAbortSignal(t.ID)
			tin.OneStep = oneStep
			f, settle := workflow.NewFuture(childCtx)
			workflow.Go(childCtx, func(c workflow.Context) { settle.Set(inlineTrial(c, tin)) })
			fut = f
		} else {
			cctx := workflow.WithChildOptions(childCtx, workflow.ChildWorkflowOptions{
				WorkflowID:            TrialWorkflowID(in.RunID, t.ID),
				WorkflowIDReusePolicy: enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
				ParentClosePolicy:     enums.PARENT_CLOSE_POLICY_REQUEST_CANCEL,
				WaitForCancellation:   true,
				RetryPolicy:           trialRetry(light),
			})
			fut = workflow.ExecuteChildWorkflow(cctx, TrialWorkflow, tin)
		}
		running++
		br.started(t)
		startedHere++
		sel.AddFuture(fut, func(f workflow.Future) {
			running--
			br.finished(t)
			var r TrialResult
			if err := f.Get(ctx, &r); err != nil {
				r = TrialResult{ID: t.ID, Cell: t.Cell, Condition: t.Condition, Rep: t.Rep, Seed: t.Seed, Outcome: OutcomeFailed, Reason: "trial workflow: " + err.Error()}
				if aborted != "" {
					r.Outcome, r.Reason = OutcomeAborted, aborted
				}
			}
			tally.Add(r)
			if r.Model != nil && r.Model.NeverCalled && aborted == "" &&
				workflow.GetVersion(ctx, versionStopNeverArmed, workflow.DefaultVersion, 1) == 1 {
				// The agent ran to its end without calling {llm_url}: the model fault can
				// never be armed in this run, so every further trial would be wasted.
				neverArmed = fmt.Sprintf("trial %s ran to its end with no model call at the model proxy, so model fault %s can never be armed in this run", r.ID, r.Model.Fault)
				aborted = neverArmed
				logger.Error("run stopped: model fault never armed", "trial", r.ID, "fault", r.Model.Fault, "proxy", r.Model.Proxy)
				cancelChildren()
			}
			switch {
			case !onDisk:
				results = append(results, r)
			case r.Dir == "":
				// Made here or by the trial's workflow, not written by its Verify: write
				// it where Aggregate reads results from.
				writes = append(writes, workflow.ExecuteActivity(wctx, a.RecordResult, RecordResultInput{OutDir: in.OutDir, Result: r}))
			}
		})
	}
	// waitWrites waits for the results being written; one that cannot be written is
	// read by Aggregate as a trial that left no result, and logged.
	waitWrites := func() {
		for _, f := range writes {
			if err := f.Get(wctx, nil); err != nil {
				logger.Warn("a trial's result could not be written to its folder", "error", err)
			}
		}
		writes = nil
	}

	for {
		for aborted == "" && running < concurrency && next < total && startedHere < limit && br.ready(next) {
			if budget.stops(tally, running, total-next) {
				aborted = budget.stopped
				break
			}
			start(next)
			next++
		}
		if running == 0 {
			break
		}
		sel.Select(ctx)
	}

	waitWrites()
	if aborted == "" && next < total {
		// The history is getting long: carry on in a fresh run of this workflow.
		in.Next, in.Results, in.Aborted = next, results, aborted
		if onDisk {
			in.Results, in.Tally = nil, tally
		}
		return ExperimentResult{}, workflow.NewContinueAsNewError(ctx, ExperimentWorkflow, in)
	}

	// Trials never started after an abort are recorded as aborted, so every planned trial
	// appears once in the results (with results on disk, Aggregate does this).
	for ; !onDisk && next < total && aborted != ""; next++ {
		t := in.Plan.Trials[br.trial(next)]
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
		Results: results, ResultsOnDisk: onDisk, Aborted: aborted, AgentCommand: in.AgentCommand,
	}).Get(actx, &summary)
	if err != nil {
		return ExperimentResult{}, err
	}
	return ExperimentResult{RunID: in.RunID, OutDir: in.OutDir, Results: results, Summary: summary, Aborted: aborted, NeverArmed: neverArmed, Budget: budget.stopped}, nil
}

// versionStopNeverArmed guards stopping the run at the first trial that proves its model
// fault can never be armed (runs started before it ran every trial).
const versionStopNeverArmed = "stop-never-armed"

// trialRetry is the retry policy of one trial's workflow. A light trial's attempt fails only
// when its worker was lost (ErrWorkerLost: starved past its heartbeat timeout, killed, or
// out of slots); anything else ends as a result. So its bound is a guard against a pool of
// workers that can never hold it, not a judgement of the trial: ten attempts, each from a
// fresh folder, 1 s apart doubling to a minute, before the trial is recorded as failed with
// the last loss as its reason. (A session trial keeps its three.)
func trialRetry(light bool) *temporal.RetryPolicy {
	if light {
		return &temporal.RetryPolicy{MaximumAttempts: 10, InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute}
	}
	return &temporal.RetryPolicy{MaximumAttempts: 3, InitialInterval: time.Second}
}
