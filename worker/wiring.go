package worker

import (
	"crypto/rand"
	"fmt"
	"log/slog"
	"os"
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
	// MaxTrials is how many trials this worker runs at once (default 8): the activity
	// slots of its worker on the run's trial queue (run.TrialTaskQueue), and its sessions.
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

// NewWorker builds the three workers of one chaos worker process, started and stopped
// together: on the task queue (run.TaskQueue, or opts.TaskQueue) every workflow and
// activity; on this process's own
// queue the steps of a trial that must reach its hub; on the trial queue
// (run.TrialTaskQueue) the trials themselves, MaxTrials at once. It removes the socket
// folders of workers that were killed on this machine first. Make c with ClientOptions.
func NewWorker(c client.Client, opts WorkerOptions) sdkworker.Worker {
	if opts.MaxTrials <= 0 {
		opts.MaxTrials = 8
	}
	identifyBinary()
	queue := opts.TaskQueue
	if queue == "" {
		queue = run.TaskQueue
	}
	w := sdkworker.New(c, queue, sdkworker.Options{
		// Never fewer activity slots than the trials a worker holds can ask for at once.
		MaxConcurrentActivityExecutionSize: ActivitySlots(opts.MaxTrials),
		// An activity learns it was cancelled only from the answer to a heartbeat it sends,
		// and the SDK holds heartbeats back for 80% of the heartbeat timeout by default: an
		// abort would reach a running agent only that late. The activities heartbeat every
		// 2s; a small worker sends each (1s), a large one fewer (HeartbeatThrottle). The SDK
		// gives each heartbeat RPC only this long and cancels the activity when it runs out:
		// the client must be made with ClientOptions, which keeps a late answer from
		// cancelling anything.
		MaxHeartbeatThrottleInterval: HeartbeatThrottle(opts.MaxTrials),
	})
	w.RegisterWorkflow(workflows.ExperimentWorkflow)
	w.RegisterWorkflow(workflows.TrialBatchWorkflow)
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
	// This worker's own queue: a trial's steps after RunTrial (its finish, its teardown)
	// come here, to the hub they need (Activities.HostQueue). A fresh name each process: a
	// restarted worker never takes the steps of trials whose hubs died with the one before.
	acts.HostQueue = hostQueue(queue)
	host := sdkworker.New(c, acts.HostQueue, sdkworker.Options{
		MaxConcurrentActivityExecutionSize: 4 * opts.MaxTrials, // a trial's agent, and its verify or teardown
		MaxHeartbeatThrottleInterval:       time.Second,
	})
	host.RegisterActivity(acts)
	// The trial queue: a trial (RunTrial) waits there, in Temporal's queue, until one of
	// this worker's MaxTrials slots frees; the SDK polls for one only when a slot is free.
	// Its identity carries the slots, so a run can tell what its workers hold
	// (TrialSlots, QueueSlots) before it starts.
	trials := sdkworker.New(c, run.TrialTaskQueue(queue), sdkworker.Options{
		MaxConcurrentActivityExecutionSize: opts.MaxTrials,
		MaxHeartbeatThrottleInterval:       HeartbeatThrottle(opts.MaxTrials),
		Identity:                           TrialIdentity(opts.MaxTrials),
	})
	trials.RegisterActivity(acts)
	removeStaleSockets(acts)
	go removeOrphanContainers(acts)
	return &workers{Worker: w, others: []sdkworker.Worker{host, trials}}
}

// hostQueue is a task queue name only this process polls.
func hostQueue(queue string) string {
	name, _ := os.Hostname()
	var b [6]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s@%s-%d-%x", queue, name, os.Getpid(), b)
}

// workers are the worker of the shared queue, the one of this process's own queue and
// the one of the trial queue, started and stopped together.
type workers struct {
	sdkworker.Worker
	others []sdkworker.Worker
}

func (p *workers) startOthers() error {
	for i, w := range p.others {
		if err := w.Start(); err != nil {
			for _, s := range p.others[:i] {
				s.Stop()
			}
			return err
		}
	}
	return nil
}

func (p *workers) stopOthers() {
	for _, w := range p.others {
		w.Stop()
	}
}

func (p *workers) Start() error {
	if err := p.startOthers(); err != nil {
		return err
	}
	if err := p.Worker.Start(); err != nil {
		p.stopOthers()
		return err
	}
	return nil
}

func (p *workers) Run(interruptCh <-chan interface{}) error {
	if err := p.startOthers(); err != nil {
		return err
	}
	defer p.stopOthers()
	return p.Worker.Run(interruptCh)
}

func (p *workers) Stop() {
	p.Worker.Stop()
	p.stopOthers()
}

// activitiesPerTrial is the activity slots a trial is given: RunAgent and WatchEvents run
// at once, and a step may overlap their end (the watcher is not awaited).
const activitiesPerTrial = 3

// ActivitySlots is how many activities a worker running maxTrials trials at once runs at
// once: the SDK's default (1,000) or activitiesPerTrial a trial, whichever is more.
func ActivitySlots(maxTrials int) int {
	return max(1000, activitiesPerTrial*maxTrials)
}

// HeartbeatThrottle is the most often one activity of a worker running maxTrials trials
// at once sends a heartbeat: every second up to 10 trials, then maxTrials/10 seconds (at
// most 30 s), so that the worker's running agents and watchers (two heartbeating
// activities a trial) send the server about 20 heartbeats a second whatever its size. An
// abort reaches a running agent within this long.
//
// Why: every heartbeat is a write of the trial's workflow to Temporal's database. At 100
// trials in flight with a one-second throttle (BenchmarkWorkerRSS, load ~23, the embedded
// server on SQLite) the worker sent ~100 a second; the server's writes ran out of their
// deadlines ("context deadline exceeded", 1,454 failed heartbeats in 7 minutes), and
// some activity tasks it recorded as started never reached the worker (a session
// creation, a RunAgent whose agent never started): each such trial sat until its
// heartbeat timeout (5 minutes there) and was run again (worker_lost), and one lost three
// times would be recorded as failed.
func HeartbeatThrottle(maxTrials int) time.Duration {
	return min(max(time.Duration(maxTrials)*time.Second/10, time.Second), 30*time.Second)
}
