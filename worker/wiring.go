package worker

import (
	"log/slog"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/crashwall/chaos/activities"
	"github.com/crashwall/chaos/run"
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
}

// NewWorker builds a worker on the chaos task queue with every workflow and activity
// registered and worker sessions enabled, so a trial's activities stay on this host.
func NewWorker(c client.Client, opts WorkerOptions) sdkworker.Worker {
	if opts.MaxTrials <= 0 {
		opts.MaxTrials = 8
	}
	w := sdkworker.New(c, run.TaskQueue, sdkworker.Options{
		EnableSessionWorker:               true,
		MaxConcurrentSessionExecutionSize: opts.MaxTrials,
	})
	w.RegisterWorkflow(workflows.ExperimentWorkflow)
	w.RegisterWorkflow(workflows.TrialWorkflow)
	acts := activities.New(c)
	if opts.ChaosBin != "" {
		acts.ChaosBin = opts.ChaosBin
	}
	acts.Logger = opts.Logger
	w.RegisterActivity(acts)
	return w
}
