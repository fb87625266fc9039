package activities

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/crashwall/chaos/probes"
	"github.com/crashwall/chaos/store"
	"github.com/crashwall/chaos/trial"
)

// Activities holds the dependencies of every activity; register one value with the worker.
//
// A trial's work is done by a trial.Host made from these fields (host), which keeps the
// hub StartHub starts, by trial, for RunAgent, WatchEvents, Verify and Teardown on this
// worker to find.
type Activities struct {
	// Client signals a trial's workflow (the watcher's abort). Nil in tests: WatchEvents
	// then only returns the reason.
	Client client.Client
	// ChaosBin is the absolute path of the chaos binary, for {wall} (default: os.Executable()).
	ChaosBin string
	// WorkRoot is where sandboxes are made (default: os.TempDir()/chaos-work-<uid>, this
	// user's only, 0700).
	WorkRoot string
	Logger   *slog.Logger
	// Judge reads the claim in closing messages (nil: probes.Rules, offline).
	Judge probes.Judge
	// JudgeRegistry is the judge registry file the reports read ("": none measured).
	JudgeRegistry string
	// Results is the results database runs are copied into (nil: none); StoreCalls
	// copies every recorded call too.
	Results    *store.Store
	StoreCalls bool
	// OutputCap is how much of each of the agent's streams is kept (0: OutputCap).
	OutputCap int64

	// HostQueue is the task queue only this worker polls (worker.NewWorker sets it): a
	// trial's steps after RunTrial are routed there, to the host of its hub.
	HostQueue string
	// heartbeatEvery is how often a long activity heartbeats (0: heartbeatEvery).
	heartbeatEvery time.Duration

	// trials runs the trials: made from the fields above on first use (host).
	trials     *trial.Host
	trialsOnce sync.Once

	mu sync.Mutex
	// specs are the spec texts of the last runs this worker ran a trial of (withSpecText).
	specs []keptSpec
}

// New returns the activities with their defaults; c may be nil (no abort signals).
func New(c client.Client) *Activities {
	return &Activities{Client: c}
}

// ErrBadInput is the error type of a failure that a retry cannot fix: a spec with
// mistakes, an unknown condition, no agent command. The trial workflow does not retry it.
const ErrBadInput = "bad_input"

// badInput is a non-retryable error that reads as the sentence msg.
func badInput(err error) error {
	return temporal.NewNonRetryableApplicationError(err.Error(), ErrBadInput, err)
}

// fail is err as the activity returns it: a trial's bad input (trial.IsBadInput) is not
// retried.
func fail(err error) error {
	if err != nil && trial.IsBadInput(err) {
		return badInput(err)
	}
	return err
}

// host is the trial.Host that runs this worker's trials, made from a's fields on first
// use.
func (a *Activities) host() *trial.Host {
	a.trialsOnce.Do(func() {
		a.trials = &trial.Host{ChaosBin: a.ChaosBin, WorkRoot: a.WorkRoot, Logger: a.Logger,
			Judge: a.Judge, JudgeRegistry: a.JudgeRegistry, OutputCap: a.OutputCap}
	})
	return a.trials
}

func (a *Activities) logger() *slog.Logger {
	if a.Logger != nil {
		return a.Logger
	}
	return slog.Default()
}

const heartbeatEvery = 2 * time.Second

// beatEvery is how often a long activity heartbeats.
func (a *Activities) beatEvery() time.Duration {
	if a.heartbeatEvery > 0 {
		return a.heartbeatEvery
	}
	return heartbeatEvery
}

// heartbeat records a heartbeat when ctx is an activity's (it is not when an activity
// function is called directly).
func heartbeat(ctx context.Context, details ...any) {
	if activity.IsActivity(ctx) {
		activity.RecordHeartbeat(ctx, details...)
	}
}

// keepAlive heartbeats every interval, with details(), from a goroutine of its own
// until the returned stop is called. A heartbeat can wait on the server (the SDK sends the
// first of each batch before it returns), and the loop that waits on the agent must not
// wait with it: it has a timeout to enforce and a cancel to act on.
//
// A cancel does not end it: the activity is still stopping its agent (SIGTERM, the grace
// period, SIGKILL, a container's removal), and a stop that outlasts the heartbeat timeout
// would have the attempt declared lost while the agent runs. After ctx is done it goes on
// heartbeating on a context the cancel does not end (the SDK sends nothing on a cancelled
// one), until the caller, the agent gone, calls stop.
func keepAlive(ctx context.Context, every time.Duration, details func() any) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(every)
		defer tick.Stop()
		cancelled := ctx.Done()
		for {
			select {
			case <-done:
				return
			case <-cancelled:
				ctx, cancelled = context.WithoutCancel(ctx), nil
			case <-tick.C:
				heartbeat(ctx, details())
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// ConnectDocker connects a's worker to the Docker engine, which removes the containers
// this host's dead workers left (trial.Host.ConnectDocker). A worker calls it once as it
// starts. (A function, not a method: every method of Activities is registered as an
// activity.)
func ConnectDocker(ctx context.Context, a *Activities) error { return a.host().ConnectDocker(ctx) }

// RemoveStaleSockets removes the wall's socket folders that a killed worker left
// (trial.Host.RemoveStaleSockets). A worker does it as it starts.
func RemoveStaleSockets(a *Activities) { a.host().RemoveStaleSockets() }
