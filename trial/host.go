package trial

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/crashwall/chaos/container"
	"github.com/crashwall/chaos/probes"
	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/proxies/llm"
	"github.com/crashwall/chaos/proxies/shim"
	"github.com/crashwall/chaos/proxies/stdio"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/redact"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/within"
)

// Host runs trials on this machine: it holds what every trial needs (the chaos binary,
// the work root, the judge) and the trials whose hubs it serves, by trial key, from
// StartHub until Teardown.
type Host struct {
	// ChaosBin is the absolute path of the chaos binary, for {wall} (default: os.Executable()).
	ChaosBin string
	// WorkRoot is where sandboxes are made (default: os.TempDir()/chaos-work-<uid>, this
	// user's only, 0700).
	WorkRoot string
	Logger   *slog.Logger
	// Judge reads the claim in closing messages (nil: probes.Rules, offline).
	Judge probes.Judge
	// JudgeRegistry is the judge registry file the reviewer's agreement is read from ("": none measured).
	JudgeRegistry string
	// OutputCap is how much of each of the agent's streams is kept (0: OutputCap).
	OutputCap int64

	mu     sync.Mutex
	trials map[string]*Live

	// docker is the connection to the Docker engine of agent.runtime: docker, made on
	// first use (runtime_docker.go).
	dockerMu sync.Mutex
	docker   *container.Client
}

// Live is the running part of a trial: its hub, served over HTTP, and the parts around it
// (part.go).
type Live struct {
	spec *spec.Spec
	ref  run.SpecRef // the spec as the trial's set-up got it (specOf)
	// info is the hub's details, kept for the trial's agent (SetUp).
	info   run.HubInfo
	hub    *hub.Hub
	record string // the record's path
	// parts are what the trial added around its hub, in the order they were set up; stop
	// closes them.
	parts []Part
	// rows is the hub's event stream, subscribed before the hub served any call (see
	// StartHub); Watch reads it, a retried Watch reads on.
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
}

// InputError is a failure that a retry cannot fix: a spec with mistakes, an unknown
// condition, no agent command.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// BadInput says the error is the user's to fix.
func (e *InputError) BadInput() bool { return true }

// badInput marks err as a failure no retry can fix.
func badInput(err error) error { return &InputError{Err: err} }

// IsBadInput says err is, or wraps, a failure no retry can fix.
func IsBadInput(err error) bool {
	var in *InputError
	return errors.As(err, &in)
}

func (h *Host) logger() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return slog.Default()
}

func (h *Host) chaosBin() (string, error) {
	if h.ChaosBin != "" {
		return h.ChaosBin, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the chaos binary for {wall}: %w", err)
	}
	return exe, nil
}

func (h *Host) outputCap() int64 {
	if h.OutputCap > 0 {
		return h.OutputCap
	}
	return OutputCap
}

func (h *Host) workRoot() string {
	if h.WorkRoot != "" {
		return h.WorkRoot
	}
	return defaultWorkRoot()
}

// live returns the running trial with that key, or nil.
func (h *Host) live(key string) *Live {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.trials[key]
}

// keep stores lt under key and returns the trial it replaces, if any.
func (h *Host) keep(key string, lt *Live) *Live {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.trials == nil {
		h.trials = map[string]*Live{}
	}
	old := h.trials[key]
	h.trials[key] = lt
	return old
}

// drop removes the running trial with that key and returns it, or nil.
func (h *Host) drop(key string) *Live {
	h.mu.Lock()
	defer h.mu.Unlock()
	lt := h.trials[key]
	delete(h.trials, key)
	return lt
}

// specOf parses the trial's spec: from its input, or, where the input leaves the spec's
// text out, from the live trial this host set up: a trial's steps carry no spec text
// (run.TrialBatchInput.TrialInput).
func (h *Host) specOf(in run.TrialInput) (*spec.Spec, error) {
	ref := in.Spec
	if len(ref.YAML) == 0 {
		if lt := h.live(in.Key()); lt != nil {
			ref = lt.ref
		}
	}
	return ParseSpec(ref)
}

// ParseSpec reads the spec the trial carries. A spec with mistakes cannot be fixed by a
// retry.
func ParseSpec(ref run.SpecRef) (*spec.Spec, error) {
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

// Dir is the trial's folder in the run folder: OutDir/trials/<cell>/<condition>/<rep>.
func Dir(in run.TrialInput) (string, error) {
	if in.OutDir == "" {
		return "", errors.New("the run has no output folder (out_dir is empty)")
	}
	dir, err := within.Join(in.OutDir, "trials", in.Trial.ID)
	if err != nil {
		return "", fmt.Errorf("trial id %q cannot name a folder in the run folder: %w", in.Trial.ID, err)
	}
	return dir, nil
}

// WriteFileAtomic writes data to path through a temporary file in the same folder and a
// rename, so a reader never sees half a file; every secret value known is redacted.
func WriteFileAtomic(path string, data []byte) error {
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
