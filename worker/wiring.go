package worker

import (
	"log/slog"
	"path/filepath"
	"time"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/crashwall/chaos/activities"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/store"
	"github.com/crashwall/chaos/workflows"
)

// WorkerOptions tune a chaos worker; the zero value is a working default.
type WorkerOptions struct {
	// MaxTrials is how many trials (worker sessions) this worker runs at once (default 8).
	MaxTrials int
	// ChaosBin is the chaos binary the trials' {wall} starts (default: this executable).
	ChaosBin string
	// Logger receives the activities' logs (nil: the activities' default).
	Logger *slog.Logger
	// JudgeRegistry is the judge registry the run reports read (default <data dir>/judges.json).
	JudgeRegistry string
	// Results is the results database every run is copied into (nil: none); StoreCalls
	// copies every recorded call too.
	Results    *store.Store
	StoreCalls bool
	// TaskQueue is the queue the worker takes runs from (default run.TaskQueue); an
	// embedded chaos run has one of its own (run.EmbeddedTaskQueue).
	TaskQueue string
}

// NewWorker builds a worker on the chaos task queue with every workflow and activity
// registered and worker sessions enabled, so a trial's activities stay on this host. Make
// c with ClientOptions.
func NewWorker(c client.Client, opts WorkerOptions) sdkworker.Worker {
	if opts.MaxTrials <= 0 {
		opts.MaxTrials = 8
	}
	queue := opts.TaskQueue
	if queue == "" {
		queue = run.TaskQueue
	}
	w := sdkworker.New(c, queue, sdkworker.Options{
		EnableSessionWorker:               true,
		MaxConcurrentSessionExecutionSize: opts.MaxTrials,
		// A trial in its session runs the agent and its watcher at once, and a setup or
		// teardown step of its own beside them; the SDK gives a worker's session activities
		// as many slots as MaxConcurrentActivityExecutionSize (1,000 by default), so at
		// 1,000 trials the 501st waited for a slot until its setup timed out.
		MaxConcurrentActivityExecutionSize: ActivitySlots(opts.MaxTrials),
		// An activity learns it was cancelled only from the answer to a heartbeat it sends,
		// and the SDK holds heartbeats back for 80% of the heartbeat timeout (16s of the
		// trial's 20s) by default: an abort would reach a running agent, and the end of the
		// agent its watcher, only that late. The activities heartbeat every 2s; send each.
		// The SDK gives each heartbeat RPC only this long and cancels the activity when it
		// runs out: the client must be made with ClientOptions, which keeps a late answer
		// from cancelling anything.
		MaxHeartbeatThrottleInterval: time.Second,
	})
	w.RegisterWorkflow(workflows.ExperimentWorkflow)
	w.RegisterWorkflow(workflows.TrialWorkflow)
	w.RegisterWorkflow(workflows.ScheduledRunWorkflow)
	acts := activities.New(c)
	if opts.ChaosBin != "" {
		acts.ChaosBin = opts.ChaosBin
	}
	acts.Logger = opts.Logger
	acts.JudgeRegistry = opts.JudgeRegistry
	acts.Results, acts.StoreCalls = opts.Results, opts.StoreCalls
	if acts.JudgeRegistry == "" {
		if dir, err := DefaultDataDir(); err == nil {
			acts.JudgeRegistry = filepath.Join(dir, "judges.json")
		}
	}
	w.RegisterActivity(acts)
	go removeOrphanContainers(acts)
	return w
}

// activitiesPerTrial is the most activities one trial runs at once in its session:
// RunAgent and WatchEvents, and a setup or teardown step.
const activitiesPerTrial = 3

// ActivitySlots is how many activities a worker running maxTrials trials at once runs at
// once: the SDK's default (1,000) or activitiesPerTrial a trial, whichever is more.
func ActivitySlots(maxTrials int) int {
	return max(1000, activitiesPerTrial*maxTrials)
}
