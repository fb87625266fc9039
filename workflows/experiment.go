package workflows

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/crashwall/chaos/run"
)

// ExperimentWorkflow runs a planned experiment: its trials in TrialBatchWorkflow children
// of at most BatchSize trials each, Plan.Concurrency trials in flight over all of them,
// then the Aggregate activity.
//
//	ExperimentWorkflow ──child──> TrialBatchWorkflow [0,200)   share 200 ─┐ RunTrial per trial
//	  concurrency 1,000 ─child──> TrialBatchWorkflow [200,400) share 200  ├ on the trial queue
//	                    ...                                              ─┘
//	  <── signal batch-report (counts, trials running, slots given back), sparse
//
// The concurrency is shared out as slots: a batch gets a share of the free ones (at most
// its trials), runs that many at once, and gives slots back once it has no trial left for
// them (in its reports, and all of them when it ends). Free slots start a new batch when
// there are at least a quarter of a full share (or its trials), else go to the live
// batches with trials waiting (SignalBatchSlots): so no slot idles while a trial waits,
// but for the time a report takes (reportEvery).
//
// It answers the "progress" query from its own counts and its batches' last reports
// (at most reportEvery late), and takes an "abort" signal (no new trials; the batches are
// cancelled, and their running trials aborted and torn down). Under --branch the batches
// of clean trials come first, and a batch of fault trials starts once they have all
// ended. Under --budget one batch runs at a time, so that each trial's start is decided
// where every running trial's spending is known. After HistoryLimit trials handed out it
// waits for its batches and continues as new, carrying the counts so far; the results
// themselves are in the trial folders.
func ExperimentWorkflow(ctx workflow.Context, in run.ExperimentInput) (run.ExperimentResult, error) {
	logger := workflow.GetLogger(ctx)
	total := len(in.Plan.Trials)
	limit := cmp.Or(in.HistoryLimit, run.DefaultHistoryLimit)
	size := cmp.Or(in.BatchSize, run.DefaultBatchSize)
	concurrency := max(in.Plan.Concurrency, 1)
	order := newBranchOrder(in.Plan)

	tally := run.Tally{Done: in.Tally.Done, By: maps.Clone(in.Tally.By), SpentUSD: in.Tally.SpentUSD}
	next := in.Next
	aborted := in.Aborted
	neverArmed, budgetStop := "", ""

	type batch struct {
		first, end, share int // share: the slots given it, top-ups included
		released          int // slots given back, as last reported
		waiting           int // trials waiting for a slot, as last known
		started           bool
		report            *run.BatchReport
	}
	live := map[int]*batch{} // by first position
	free := concurrency

	if err := workflow.SetQueryHandler(ctx, run.QueryProgress, func() (run.Progress, error) {
		p := run.Progress{Total: total, Done: tally.Done, ByOutcome: maps.Clone(tally.By), Aborted: aborted}
		if p.ByOutcome == nil {
			p.ByOutcome = map[string]int{}
		}
		for _, b := range live {
			if b.report == nil {
				p.Running += b.share // started, not yet heard from
				continue
			}
			p.Running += b.report.Running
			p.Done += b.report.Tally.Done
			for k, n := range b.report.Tally.By {
				p.ByOutcome[k] += n
			}
		}
		return p, nil
	}); err != nil {
		return run.ExperimentResult{}, err
	}

	batchCtx, cancelBatches := workflow.WithCancel(ctx)
	stopRun := func(reason string, cancel bool) {
		if aborted != "" && aborted != budgetStop {
			return
		}
		// A run stopped by its budget lets its running trials finish; an abort (or a
		// model fault that can never be armed) still cancels them.
		aborted = reason
		if cancel {
			cancelBatches()
		}
	}
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(workflow.GetSignalChannel(ctx, run.SignalAbort), func(c workflow.ReceiveChannel, _ bool) {
		var reason string
		c.Receive(ctx, &reason)
		if reason == "" {
			reason = "aborted"
		}
		logger.Info("run aborted", "reason", reason)
		stopRun(reason, true)
	})
	sel.AddReceive(workflow.GetSignalChannel(ctx, run.SignalBatchReport), func(c workflow.ReceiveChannel, _ bool) {
		var r run.BatchReport
		c.Receive(ctx, &r)
		b := live[r.First]
		if b == nil || (b.report != nil && b.report.Tally.Done > r.Tally.Done) {
			return // from a batch that has ended, or older than one read
		}
		b.report = &r
		b.waiting = r.Waiting
		if r.Released > b.released {
			free += r.Released - b.released
			b.released = r.Released
		}
		switch {
		case r.NeverArmed != "":
			if neverArmed == "" {
				neverArmed = r.NeverArmed
			}
			stopRun(r.NeverArmed, true)
		case r.Budget != "":
			if budgetStop == "" {
				budgetStop = r.Budget
			}
			stopRun(r.Budget, false)
		}
	})

	handedOut := 0
	// batchEnd is where the batch starting at next ends: BatchSize trials, never past the
	// history limit, nor across the line between clean and fault trials under --branch.
	batchEnd := func() int {
		end := min(next+size, next+limit-handedOut, total)
		if order.on && next < order.cleans {
			end = min(end, order.cleans)
		}
		return end
	}
	canStart := func() bool {
		if aborted != "" || next >= total || handedOut >= limit || workflow.GetInfo(ctx).GetCurrentHistoryLength() >= experimentEvents {
			return false
		}
		if in.BudgetUSD > 0 && len(live) > 0 {
			return false
		}
		if order.on && next >= order.cleans {
			for _, b := range live {
				if b.first < order.cleans {
					return false // a fault trial waits for every clean trial
				}
			}
		}
		need := min((min(concurrency, size)+3)/4, batchEnd()-next)
		return free >= need
	}
	startBatch := func() {
		end := batchEnd()
		b := &batch{first: next, end: end, share: min(free, end-next)}
		b.waiting = end - next - b.share
		bin := run.TrialBatchInput{
			RunID: in.RunID, OutDir: in.OutDir, Spec: in.Spec, Plan: in.Plan, AgentCommand: in.AgentCommand,
			AgentTimeout: in.AgentTimeout, HeartbeatTimeout: in.HeartbeatTimeout,
			First: b.first, End: b.end, Concurrency: b.share,
			BudgetUSD: in.BudgetUSD, ExpectedTrialUSD: in.ExpectedTrialUSD, Before: tally, After: total - end,
		}
		cctx := workflow.WithChildOptions(batchCtx, workflow.ChildWorkflowOptions{
			WorkflowID:            run.TrialBatchWorkflowID(in.RunID, b.first),
			WorkflowIDReusePolicy: enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
			ParentClosePolicy:     enums.PARENT_CLOSE_POLICY_REQUEST_CANCEL,
			WaitForCancellation:   true,
		})
		fut := workflow.ExecuteChildWorkflow(cctx, TrialBatchWorkflow, bin)
		free -= b.share
		live[b.first] = b
		handedOut += end - next
		next = end
		sel.AddFuture(fut.GetChildWorkflowExecution(), func(workflow.Future) { b.started = true })
		sel.AddFuture(fut, func(f workflow.Future) {
			delete(live, b.first)
			free += b.share - b.released
			var r run.TrialBatchResult
			if err := f.Get(ctx, &r); err != nil {
				// Its trials' results are in their folders (Aggregate reads them); the
				// counts are what it last reported.
				logger.Error("a batch of trials failed", "first", b.first, "error", err)
				if b.report != nil {
					r.Tally = b.report.Tally
				}
			}
			tally.Merge(r.Tally)
			if r.NeverArmed != "" {
				if neverArmed == "" {
					neverArmed = r.NeverArmed
				}
				stopRun(r.NeverArmed, true)
			}
			if r.Budget != "" {
				if budgetStop == "" {
					budgetStop = r.Budget
				}
				stopRun(r.Budget, false)
			}
		})
	}

	// topUp gives the free slots no new batch can take to the batches with trials waiting,
	// the most waiting first: a batch that drains gives its slots back, and they must not
	// idle while another batch's trials wait behind its share.
	topUp := func() {
		firsts := slices.Sorted(maps.Keys(live))
		for free > 0 {
			var best *batch
			for _, f := range firsts {
				// (A batch not started yet cannot take a signal.)
				if b := live[f]; b.started && b.waiting > 0 && (best == nil || b.waiting > best.waiting) {
					best = b
				}
			}
			if best == nil || aborted != "" {
				return
			}
			n := min(free, best.waiting)
			// Not waited on: the batch takes them when it can, or gives them back.
			workflow.SignalExternalWorkflow(ctx, run.TrialBatchWorkflowID(in.RunID, best.first), "", run.SignalBatchSlots, n)
			best.share += n
			best.waiting -= n
			free -= n
		}
	}

	for {
		for canStart() {
			startBatch()
		}
		topUp()
		if len(live) == 0 {
			break
		}
		sel.Select(ctx)
	}

	if aborted == "" && next < total {
		// The history is getting long: carry on in a fresh run of this workflow.
		in.Next, in.Tally, in.Aborted = next, tally, aborted
		return run.ExperimentResult{}, workflow.NewContinueAsNewError(ctx, ExperimentWorkflow, in)
	}

	// Aggregate heartbeats: a server or database restart loses its completion, and its
	// heartbeat timeout, not its start-to-close, then says so.
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 5 * time.Minute,
		HeartbeatTimeout:    aggregateHeartbeat,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 5},
	})
	if aborted != "" {
		actx, _ = workflow.NewDisconnectedContext(actx)
	}
	var summary run.Summary
	err := workflow.ExecuteActivity(actx, a.Aggregate, run.AggregateInput{
		RunID: in.RunID, OutDir: in.OutDir, Spec: in.Spec, Plan: in.Plan, Started: in.Started,
		Aborted: aborted, AgentCommand: in.AgentCommand, Gates: in.Gates,
	}).Get(actx, &summary)
	if err != nil {
		return run.ExperimentResult{}, err
	}
	return run.ExperimentResult{RunID: in.RunID, OutDir: in.OutDir, Summary: summary, Aborted: aborted, NeverArmed: neverArmed, Budget: budgetStop}, nil
}

// experimentEvents is the history length past which a run of the experiment's workflow
// hands out no more batches and continues as new once they end: its batches' reports
// come at most one per batch every reportEvery, so a long run of slow trials could
// otherwise outgrow it before its HistoryLimit of trials.
const experimentEvents = 10_000

// aggregateHeartbeat is Aggregate's heartbeat timeout: it heartbeats every few seconds
// (activities.Aggregate), so one this silent lost its worker or its server.
const aggregateHeartbeat = 30 * time.Second
