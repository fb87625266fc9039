package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/crashwall/chaos/container"
	"github.com/crashwall/chaos/probes"
	"github.com/crashwall/chaos/proxies/httpwall"
	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/proxies/llm"
	"github.com/crashwall/chaos/proxies/shim"
	"github.com/crashwall/chaos/proxies/stdio"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/redact"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/store"
	"github.com/crashwall/chaos/within"
)

// Activities holds the dependencies of every activity; register one value with the worker.
//
// A trial's activities run in one worker session, so they all run in this process: the
// hub StartHub starts is kept here, by trial, for RunAgent, WatchEvents, Verify and
// Teardown to find.
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
	// MaxTrials is how many trials this worker runs at once (0: no bound): its slots on
	// the trial queue (worker.NewWorker).
	MaxTrials int

	// heartbeatEvery is how often a long activity heartbeats (0: heartbeatEvery).
	heartbeatEvery time.Duration

	mu     sync.Mutex
	trials map[string]*liveTrial
	// held is the light trials holding one of the MaxTrials slots.
	held     map[string]bool
	slots    chan struct{}
	slotOnce sync.Once
	// specs are the spec texts of the last runs this worker ran a trial of (withSpecText).
	specs []keptSpec

	// docker is the connection to the Docker engine of agent.runtime: docker, made on
	// first use (runtime_docker.go).
	dockerMu sync.Mutex
	docker   *container.Client
}

// liveTrial is the running part of a trial: its hub, served over HTTP.
type liveTrial struct {
	spec *spec.Spec
	ref  run.SpecRef // the spec as the trial's set-up got it (specOf)
	// info is the hub's details, kept for the trial's agent (SetUpTrial).
	info   run.HubInfo
	hub    *hub.Hub
	srv    *httpwall.Server
	record string // the record's path
	// rows is the hub's event stream, subscribed before the hub served any call (see
	// StartHub); WatchEvents reads it, a retried WatchEvents reads on.
	rows        <-chan *record.Row
	unsubscribe func()
	// model is the trial's model proxy at llmURL, nil when the spec has no model.upstream.
	model  *llm.ModelProxy
	llmURL string
	// stream is the hub's MCP stream for the relay ({wall}), nil when {wall} bridges over
	// HTTP instead.
	stream *stdio.StreamServer
	// shim is the script wall's launchers (proxies/shim), nil when the spec has no scripts.
	shim *shim.Shim
	// browser is the browser wall ({cdp_url}), nil when the spec has no browser section.
	browser *liveBrowser
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

func (a *Activities) logger() *slog.Logger {
	if a.Logger != nil {
		return a.Logger
	}
	return slog.Default()
}

func (a *Activities) chaosBin() (string, error) {
	if a.ChaosBin != "" {
		return a.ChaosBin, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the chaos binary for {wall}: %w", err)
	}
	return exe, nil
}

func (a *Activities) outputCap() int64 {
	if a.OutputCap > 0 {
		return a.OutputCap
	}
	return OutputCap
}

func (a *Activities) workRoot() string {
	if a.WorkRoot != "" {
		return a.WorkRoot
	}
	return defaultWorkRoot()
}

// live returns the running trial with that key, or nil.
func (a *Activities) live(key string) *liveTrial {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.trials[key]
}

// keep stores lt under key and returns the trial it replaces, if any.
func (a *Activities) keep(key string, lt *liveTrial) *liveTrial {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.trials == nil {
		a.trials = map[string]*liveTrial{}
	}
	old := a.trials[key]
	a.trials[key] = lt
	return old
}

// drop removes the running trial with that key and returns it, or nil.
func (a *Activities) drop(key string) *liveTrial {
	a.mu.Lock()
	defer a.mu.Unlock()
	lt := a.trials[key]
	delete(a.trials, key)
	return lt
}

// stop closes the trial's hub (writing the record's session end) and its server.
func (lt *liveTrial) stop(reason string) error {
	if lt.shim != nil {
		lt.shim.Outside() // a change to the original project is recorded before the end
		lt.shim.Close()
	}
	err := lt.hub.Close(reason)
	lt.unsubscribe()
	if lt.stream != nil {
		if serr := lt.stream.Close(); err == nil {
			err = serr
		}
	}
	if serr := lt.srv.Close(); err == nil {
		err = serr
	}
	lt.browser.close()
	return err
}

// parseSpec reads the spec the trial carries. A spec with mistakes cannot be fixed by a
// retry.
// specOf parses the trial's spec: from its input, or, where the input leaves the spec's
// text out, from the live trial this worker set up: a trial's steps carry no spec text
// (run.TrialBatchInput.TrialInput); RunTrial fills it in first (withSpecText).
func (a *Activities) specOf(in run.TrialInput) (*spec.Spec, error) {
	ref := in.Spec
	if len(ref.YAML) == 0 {
		if lt := a.live(in.Key()); lt != nil {
			ref = lt.ref
		}
	}
	return parseSpec(ref)
}

func parseSpec(ref run.SpecRef) (*spec.Spec, error) {
	name := ref.Path
	if name == "" {
		name = ref.Name
	}
	if len(ref.YAML) == 0 {
		return nil, badInput(fmt.Errorf("the trial carries no spec text (spec %q)", name))
	}
	s, err := spec.Parse(name, ref.YAML)
	if err != nil {
		return nil, badInput(err)
	}
	s.Path = ref.Path
	if ref.Profile != "" {
		s.Agent.Profile = ref.Profile
	}
	LearnSecrets(s)
	return s, nil
}

// LearnSecrets adds the values the spec's ${VAR}s take on this worker, and the model
// keys in its environment (which the agent inherits: llm.KeyEnv), to the process's
// registry (redact.Known) before anything of the trial is written: every writer of the
// trial and the run, and every payload sent to Temporal, replaces them.
func LearnSecrets(s *spec.Spec) {
	for _, sc := range s.Secrets(nil) {
		redact.Known.Add(sc.Name, sc.Value)
	}
	for _, k := range llm.KeyEnv {
		if v, ok := os.LookupEnv(k); ok {
			redact.Known.Add(k, v)
		}
	}
}

// trialTask is the task the trial performs.
func trialTask(s *spec.Spec, id string) (spec.Task, error) {
	for _, t := range s.Tasks {
		if t.ID == id {
			return t, nil
		}
	}
	if id == "" && len(s.Tasks) == 1 {
		return s.Tasks[0], nil
	}
	var ids []string
	for _, t := range s.Tasks {
		ids = append(ids, t.ID)
	}
	return spec.Task{}, fmt.Errorf("the spec has no task %q (tasks: %s)", id, strings.Join(ids, ", "))
}

// trialDir is the trial's folder in the run folder: OutDir/trials/<cell>/<condition>/<rep>.
func trialDir(in run.TrialInput) (string, error) {
	if in.OutDir == "" {
		return "", errors.New("the run has no output folder (out_dir is empty)")
	}
	dir, err := within.Join(in.OutDir, "trials", in.Trial.ID)
	if err != nil {
		return "", fmt.Errorf("trial id %q cannot name a folder in the run folder: %w", in.Trial.ID, err)
	}
	return dir, nil
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

// writeFileAtomic writes data to path through a temporary file in the same folder and a
// rename, so a reader never sees half a file; every secret value known is redacted.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(redact.Known.Bytes(data))
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
