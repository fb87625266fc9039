package worker

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// BenchmarkTrialShape weighs the shapes a trial could take in Temporal on the embedded
// server, with steps that do nothing, so that only Temporal's own work is measured (the
// server and the SDK worker, both in this process): what a trial's workflow machinery
// costs, apart from chaos's activities and the agent.
//
//	child        each trial a child workflow: its set-up a local activity in its first
//	             workflow task, then one activity (the agent's): session 8's light trial
//	inline       each trial a coroutine of the experiment's workflow: its set-up one
//	             activity on the shared queue, then the agent's (no child, no second history)
//	inline-local the same with the set-up a local activity of the experiment's workflow task
//
// Each sub-benchmark runs b.N trials, 4 at a time, in one experiment workflow. It reports
// the process's CPU a trial (cpu-ms, getrusage: the server and the worker), the history
// events a trial adds (events, the experiment's and its children's), and wall time a
// trial (ns/op). Run the shapes more than once (-count) on a busy machine: they are
// measured one after the other.
//
//	go test ./worker -run '^$' -bench TrialShape -benchtime 200x -count 2
func BenchmarkTrialShape(b *testing.B) {
	s := startTestServer(b, ServerConfig{DataDir: b.TempDir(), UIPort: NoUI})
	c := dialTestClient(b, s.FrontendAddr())
	const queue = "shape"
	w := sdkworker.New(c, queue, sdkworker.Options{})
	w.RegisterWorkflow(shapeExperiment)
	w.RegisterWorkflow(shapeTrial)
	w.RegisterActivityWithOptions(shapeStep, activity.RegisterOptions{Name: "shapeStep"})
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(w.Stop)
	// One run first: the namespace's caches and each shape's first code paths.
	for _, shape := range []string{"child", "inline", "inline-local"} {
		runShape(b, c, queue, shape, 4)
	}
	for _, shape := range []string{"child", "inline", "inline-local"} {
		b.Run(shape, func(b *testing.B) {
			var r0, r1 syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
			b.ResetTimer()
			id := runShape(b, c, queue, shape, b.N)
			b.StopTimer()
			syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
			cpu := tvDuration(r1.Utime) + tvDuration(r1.Stime) - tvDuration(r0.Utime) - tvDuration(r0.Stime)
			b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(b.N), "cpu-ms")
			b.ReportMetric(float64(countEvents(b, c, id, shape, b.N))/float64(b.N), "events")
		})
	}
}

func runShape(b *testing.B, c client.Client, queue, shape string, n int) string {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	id := fmt.Sprintf("shape-%s-%d", shape, time.Now().UnixNano())
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, shapeExperiment, shape, n, 4)
	if err != nil {
		b.Fatal(err)
	}
	if err := run.Get(ctx, nil); err != nil {
		b.Fatalf("%s: %v", shape, err)
	}
	return id
}

func shapeStep(ctx context.Context, trial int) (int, error) { return trial, nil }

var shapeOpts = workflow.ActivityOptions{StartToCloseTimeout: time.Minute, RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3}}

func shapeExperiment(ctx workflow.Context, shape string, n, concurrency int) error {
	sel := workflow.NewSelector(ctx)
	running, next := 0, 0
	start := func(i int) {
		running++
		var f workflow.Future
		switch shape {
		case "child":
			cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
				WorkflowID: fmt.Sprintf("%s/%d", workflow.GetInfo(ctx).WorkflowExecution.ID, i),
			})
			f = workflow.ExecuteChildWorkflow(cctx, shapeTrial, i)
		default:
			fut, settle := workflow.NewFuture(ctx)
			f = fut
			workflow.Go(ctx, func(ctx workflow.Context) {
				settle.Set(nil, shapeSteps(ctx, i, shape == "inline-local"))
			})
		}
		sel.AddFuture(f, func(f workflow.Future) {
			running--
			if err := f.Get(ctx, nil); err != nil {
				workflow.GetLogger(ctx).Error("trial failed", "error", err)
			}
		})
	}
	for {
		for running < concurrency && next < n {
			start(next)
			next++
		}
		if running == 0 {
			return nil
		}
		sel.Select(ctx)
	}
}

func shapeTrial(ctx workflow.Context, trial int) error { return shapeSteps(ctx, trial, true) }

// shapeSteps is a trial's two steps: its set-up (local or scheduled) and its agent's.
func shapeSteps(ctx workflow.Context, trial int, localSetUp bool) error {
	actx := workflow.WithActivityOptions(ctx, shapeOpts)
	var out int
	if localSetUp {
		lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: time.Minute})
		if err := workflow.ExecuteLocalActivity(lctx, shapeStep, trial).Get(ctx, &out); err != nil {
			return err
		}
	} else if err := workflow.ExecuteActivity(actx, "shapeStep", trial).Get(ctx, &out); err != nil {
		return err
	}
	return workflow.ExecuteActivity(actx, "shapeStep", trial).Get(ctx, &out)
}

// countEvents is the history events of the experiment id and, for the child shape, of
// its n children.
func countEvents(b *testing.B, c client.Client, id, shape string, n int) int {
	b.Helper()
	ids := []string{id}
	if shape == "child" {
		for i := range n {
			ids = append(ids, fmt.Sprintf("%s/%d", id, i))
		}
	}
	total := 0
	for _, wid := range ids {
		iter := c.GetWorkflowHistory(context.Background(), wid, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for iter.HasNext() {
			if _, err := iter.Next(); err != nil {
				b.Fatal(err)
			}
			total++
		}
	}
	return total
}

func tvDuration(t syscall.Timeval) time.Duration {
	return time.Duration(t.Sec)*time.Second + time.Duration(t.Usec)*time.Microsecond
}
