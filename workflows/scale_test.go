package workflows

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/crashwall/chaos/run"
)

// TestThousandInFlightBounded: 2,000 trials at concurrency 1,000, each taking 1 to 7
// minutes of workflow time (a timer in the trial's place: the SDK's test environment
// holds at most 1,000 pending callbacks, and a thousand mocked activities in flight can
// fill them and deadlock it; the trial's own RunTrial is tested in trial_test.go). The run reaches 1,000 trials in flight and keeps most of them in
// flight while trials are left to start; every trial runs once; no workflow holds more
// than run.DefaultBatchSize trials, nor more than that many at once; and each workflow's
// history, estimated from the commands it made and the messages it took, stays within
// bounds that grow with its batches, not its trials in flight (a batch: 10 events a trial +
// 50; the experiment, whose batches here report about ten times each: 80 a batch + 50).
func TestThousandInFlightBounded(t *testing.T) {
	const trials, concurrency = 2000, 1000
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestWorkflowEnvironment()
	counts := &commandCounts{byWF: map[string]*wfCommands{}}
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{counts}})
	env.RegisterWorkflow(TrialBatchWorkflow)
	env.RegisterActivity(a)
	env.OnActivity(a.Aggregate, mock.Anything, mock.Anything).Return(run.Summary{}, nil)

	var mu sync.Mutex
	inFlight, most := 0, 0
	perBatch, perBatchMost, perBatchTrials := map[string]int{}, map[string]int{}, map[string]int{}
	ids := map[string]int{}
	var lastStart time.Time
	type change struct {
		at time.Time
		n  int
	}
	var changes []change
	runAttempt = func(ctx workflow.Context, in run.TrialInput, attempt int) (run.TrialResult, error) {
		batch := workflow.GetInfo(ctx).WorkflowExecution.ID
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		perBatch[batch]++
		perBatchMost[batch] = max(perBatchMost[batch], perBatch[batch])
		perBatchTrials[batch]++
		ids[in.Trial.ID]++
		lastStart = workflow.Now(ctx)
		changes = append(changes, change{workflow.Now(ctx), inFlight})
		mu.Unlock()
		defer func() {
			mu.Lock()
			inFlight--
			perBatch[batch]--
			changes = append(changes, change{workflow.Now(ctx), inFlight})
			mu.Unlock()
		}()
		if err := workflow.Sleep(ctx, time.Duration(in.Trial.Rep%7+1)*time.Minute); err != nil {
			return run.TrialResult{}, err
		}
		// The history counts the trial as the RunTrial activity it stands for.
		w := counts.of(ctx)
		counts.mu.Lock()
		w.activities++
		counts.mu.Unlock()
		return run.TrialResult{ID: in.Trial.ID, Outcome: run.OutcomeCompleted, Verdict: "correct", Dir: "trials/" + in.Trial.ID}, nil
	}
	t.Cleanup(func() { runAttempt = runTrial })

	env.ExecuteWorkflow(ExperimentWorkflow, run.ExperimentInput{RunID: "r", Plan: planOf(trials, concurrency)})
	require.NoError(t, env.GetWorkflowError())

	require.Equal(t, concurrency, most, "trials in flight at most")
	require.Len(t, ids, trials)
	for id, n := range ids {
		require.Equal(t, 1, n, "trial %s ran %d times", id, n)
	}
	for b, n := range perBatchTrials {
		require.LessOrEqual(t, n, run.DefaultBatchSize, "batch %s ran %d trials", b, n)
		require.LessOrEqual(t, perBatchMost[b], run.DefaultBatchSize, "batch %s had %d trials at once", b, perBatchMost[b])
	}

	// The trials in flight, averaged over the time from the first start to the last: the
	// run holds its concurrency while it has trials to start, short of the slots a
	// draining batch has not given back yet.
	area, at, n := 0.0, changes[0].at, 0
	for _, c := range changes {
		if c.at.After(lastStart) {
			break
		}
		area += float64(n) * c.at.Sub(at).Seconds()
		at, n = c.at, c.n
	}
	mean := area / lastStart.Sub(changes[0].at).Seconds()
	t.Logf("%d trials at concurrency %d: %d in flight at most, %.0f on average until the last started (%s of workflow time), %d batches",
		trials, concurrency, most, mean, lastStart.Sub(changes[0].at), len(perBatchTrials))
	require.GreaterOrEqual(t, mean, 0.75*concurrency, "trials in flight on average while trials were left to start")

	for id, c := range counts.byWF {
		events := c.events()
		t.Logf("%s: %d trials, %+v, about %d events at most", id, perBatchTrials[id], *c, events)
		if c.children > 0 { // the experiment
			require.LessOrEqual(t, events, 80*c.children+50, "the experiment's history")
			continue
		}
		require.LessOrEqual(t, events, 10*perBatchTrials[id]+50, "batch %s's history", id)
	}
}

// commandCounts counts, per workflow, the commands it makes and the messages it takes:
// enough to bound its history (the test environment keeps none).
type commandCounts struct {
	interceptor.WorkerInterceptorBase
	mu   sync.Mutex
	byWF map[string]*wfCommands
}

type wfCommands struct {
	activities, timers, signalsOut, signalsIn, children int
}

// events is an upper bound on the history of a workflow that made these commands: each
// activity 3 events (scheduled, started, closed), a timer 2, a signal sent 2, one taken
// 1, a child 3 (initiated, started, closed), the start and the close 2, and a workflow
// task (3 events) for every message that can wake it.
func (c wfCommands) events() int {
	wakes := c.activities + c.timers + c.signalsOut + c.signalsIn + 2*c.children + 1
	return 3*c.activities + 2*c.timers + 2*c.signalsOut + c.signalsIn + 3*c.children + 2 + 3*wakes
}

func (c *commandCounts) of(ctx workflow.Context) *wfCommands {
	id := workflow.GetInfo(ctx).WorkflowExecution.ID
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.byWF[id]
	if w == nil {
		w = &wfCommands{}
		c.byWF[id] = w
	}
	return w
}

func (c *commandCounts) add(ctx workflow.Context, f func(*wfCommands)) {
	w := c.of(ctx)
	c.mu.Lock()
	f(w)
	c.mu.Unlock()
}

func (c *commandCounts) InterceptWorkflow(ctx workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &countIn{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, counts: c}
}

type countIn struct {
	interceptor.WorkflowInboundInterceptorBase
	counts *commandCounts
}

func (i *countIn) Init(outbound interceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(&countOut{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: outbound}, counts: i.counts})
}

func (i *countIn) HandleSignal(ctx workflow.Context, in *interceptor.HandleSignalInput) error {
	i.counts.add(ctx, func(w *wfCommands) { w.signalsIn++ })
	return i.Next.HandleSignal(ctx, in)
}

type countOut struct {
	interceptor.WorkflowOutboundInterceptorBase
	counts *commandCounts
}

func (o *countOut) ExecuteActivity(ctx workflow.Context, activityType string, args ...interface{}) workflow.Future {
	o.counts.add(ctx, func(w *wfCommands) { w.activities++ })
	return o.Next.ExecuteActivity(ctx, activityType, args...)
}

func (o *countOut) NewTimer(ctx workflow.Context, d time.Duration) workflow.Future {
	o.counts.add(ctx, func(w *wfCommands) { w.timers++ })
	return o.Next.NewTimer(ctx, d)
}

func (o *countOut) SignalExternalWorkflow(ctx workflow.Context, workflowID, runID, signalName string, arg interface{}) workflow.Future {
	o.counts.add(ctx, func(w *wfCommands) { w.signalsOut++ })
	return o.Next.SignalExternalWorkflow(ctx, workflowID, runID, signalName, arg)
}

func (o *countOut) ExecuteChildWorkflow(ctx workflow.Context, childWorkflowType string, args ...interface{}) workflow.ChildWorkflowFuture {
	o.counts.add(ctx, func(w *wfCommands) { w.children++ })
	return o.Next.ExecuteChildWorkflow(ctx, childWorkflowType, args...)
}
