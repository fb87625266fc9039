package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/crashwall/chaos/run"
)

// reportEvery is the longest a batch keeps a change from its experiment: the experiment's
// progress query is this late at most, and a slot the batch has no trial for is given
// back this late at most.
const reportEvery = 5 * time.Second

// TrialBatchWorkflow runs a run's trials at positions [in.First, in.End) of the order they
// start in, in.Concurrency at a time, each with trialAttempts, and returns their counts.
//
// Why batches: a workflow's every update sorts the timers of all its pending activities,
// so one workflow cannot hold a thousand trials in flight, nor every trial's events
// (docs/ARCHITECTURE.md has the figures). A batch holds at most
// run.DefaultBatchSize trials, about seven events each (the spec's text once, in its
// start); the experiment holds a few dozen events a batch.
//
// It tells its experiment how it goes (SignalBatchReport: counts so far, trials running,
// slots it has no trial for) at most once every reportEvery, on a timer started by the
// first change since the last report, so a batch's reports are bounded by its trials and
// by its time, never one a trial; a stop the run must make (a model fault never armed, the
// budget) is reported at once. Its results stay in the trial folders; the ones it made
// itself (a trial that failed or was aborted before Verify wrote one) it writes there.
//
// Cancelled (the run aborted), it starts no more trials, and the running ones are
// aborted, verified and torn down as their steps say; it then ends with its counts.
func TrialBatchWorkflow(ctx workflow.Context, in run.TrialBatchInput) (run.TrialBatchResult, error) {
	logger := workflow.GetLogger(ctx)
	parent := workflow.GetInfo(ctx).ParentWorkflowExecution
	order := newBranchOrder(in.Plan)
	concurrency := max(in.Concurrency, 1)
	budget := newBudget(in.BudgetUSD, in.ExpectedTrialUSD)

	// dctx is for what must happen after a cancel: writing results, the last report.
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	wctx := workflow.WithActivityOptions(dctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 5},
	})
	trialCtx, cancelTrials := workflow.WithCancel(ctx)

	var tally run.Tally
	var stop, neverArmed string // stop: why no more trials start
	var writes []workflow.Future
	running, next := 0, in.First
	released, reported := 0, run.BatchReport{Released: -1}
	flushing := false
	sel := workflow.NewSelector(ctx)

	report := func() {
		r := run.BatchReport{First: in.First, Tally: tally, Running: running, Waiting: in.End - next, Released: released, NeverArmed: neverArmed, Budget: budget.stopped}
		if parent == nil || (r.Tally.Done == reported.Tally.Done && r.Running == reported.Running && r.Waiting == reported.Waiting && r.Released == reported.Released &&
			r.NeverArmed == reported.NeverArmed && r.Budget == reported.Budget) {
			return
		}
		reported = r
		// Not waited for: the trials go on meanwhile. A report lost is made good by the
		// next one, or by the batch's result.
		sel.AddFuture(workflow.SignalExternalWorkflow(dctx, parent.ID, "", run.SignalBatchReport, r), func(f workflow.Future) {
			if err := f.Get(dctx, nil); err != nil {
				logger.Warn("could not report to the experiment", "error", err)
			}
		})
	}
	changed := func() {
		if flushing || parent == nil {
			return
		}
		flushing = true
		sel.AddFuture(workflow.NewTimer(ctx, reportEvery), func(workflow.Future) {
			flushing = false
			report()
		})
	}

	// More slots from the experiment, for trials waiting here; given back (at the next
	// report) when none waits any more.
	sel.AddReceive(workflow.GetSignalChannel(ctx, run.SignalBatchSlots), func(c workflow.ReceiveChannel, _ bool) {
		var n int
		c.Receive(ctx, &n)
		concurrency += n
		if next >= in.End || stop != "" || ctx.Err() != nil {
			released += n
			changed()
		}
	})

	start := func(pos int) {
		t := in.Plan.Trials[order.trial(pos)]
		tin := in.TrialInput(t, order.from(t))
		f, settle := workflow.NewFuture(trialCtx)
		workflow.Go(trialCtx, func(c workflow.Context) { settle.Set(trialAttempts(c, tin)) })
		running++
		sel.AddFuture(f, func(f workflow.Future) {
			running--
			var r run.TrialResult
			if err := f.Get(ctx, &r); err != nil {
				r = run.TrialResult{ID: t.ID, Cell: t.Cell, Condition: t.Condition, Rep: t.Rep, Seed: t.Seed, Outcome: run.OutcomeFailed, Reason: "trial: " + err.Error()}
				if ctx.Err() != nil {
					r.Outcome, r.Reason = run.OutcomeAborted, "the run was cancelled"
				}
			}
			tally.Add(r)
			if r.Model != nil && r.Model.NeverCalled && stop == "" && ctx.Err() == nil {
				// The agent ran to its end without calling {llm_url}: the model fault can
				// never be armed in this run, so every further trial would be wasted.
				neverArmed = fmt.Sprintf("trial %s ran to its end with no model call at the model proxy, so model fault %s can never be armed in this run", r.ID, r.Model.Fault)
				stop = neverArmed
				logger.Error("run stopped: model fault never armed", "trial", r.ID, "fault", r.Model.Fault, "proxy", r.Model.Proxy)
				cancelTrials()
				report()
			}
			if r.Dir == "" {
				// Made here, not written by its Verify: write it where Aggregate reads
				// results from.
				writes = append(writes, workflow.ExecuteActivity(wctx, a.RecordResult, run.RecordResultInput{OutDir: in.OutDir, Result: r}))
			}
			if next >= in.End || stop != "" || ctx.Err() != nil {
				released++ // a slot this batch has no trial for
			}
			changed()
		})
	}

	for {
		for stop == "" && ctx.Err() == nil && running < concurrency && next < in.End {
			before := tally
			before.Done += in.Before.Done
			before.SpentUSD += in.Before.SpentUSD
			if budget.stops(before, running, in.End-next+in.After) {
				stop = budget.stopped
				released += concurrency - running
				report()
				break
			}
			start(next)
			next++
		}
		if running == 0 {
			// A report's timer may be left: the batch's result says the rest.
			break
		}
		sel.Select(ctx)
	}
	for _, f := range writes {
		if err := f.Get(wctx, nil); err != nil {
			logger.Warn("a trial's result could not be written to its folder", "error", err)
		}
	}
	return run.TrialBatchResult{Tally: tally, NeverArmed: neverArmed, Budget: budget.stopped}, nil
}
