package trial

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"syscall"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
)

// agentRuntime starts a trial's agent: as a process group of the worker's user
// (processRuntime), or in a container (dockerRuntime, agent.runtime: docker). RunAgent
// keeps the rest of the contract whichever it is: the timeout, TERM then KILL, the
// output's tails, the exit code, a cancel.
type agentRuntime interface {
	// start starts the filled-in command with its stdout and stderr going to the
	// streams' write ends. An error is a command that could not start.
	start(ctx context.Context, s *spec.Spec, in run.AgentInput, stdout, stderr *capturedStream) (runningAgent, error)
}

// runningAgent is a started agent.
type runningAgent interface {
	// done is closed when the agent's first process has ended.
	done() <-chan struct{}
	// stop asks the agent to end (SIGTERM), kills it after the grace period, and
	// returns once it has ended.
	stop()
	// finish, once the agent has ended, removes whatever it left (processes, a
	// container) and returns its exit code: 128+signal when a signal ended it.
	finish(ctx context.Context) int
	// describe names it for the log ("pid 123", "container 0a1b2c3d4e5f").
	describe() string
}

// runtimeFor is the runtime of the spec's agent.
func (h *Host) runtimeFor(s *spec.Spec) agentRuntime {
	if s.Agent.IsDocker() {
		return &dockerRuntime{h: h}
	}
	return processRuntime{h: h}
}

// processRuntime runs the agent through `sh -c` in the sandbox as its own process
// group, under a reaper on Linux (`chaos-relay reap`, package reap): nothing the agent
// starts outlives it, not even when the worker is killed (the reaper inherits the
// agent's orphans and kills them).
type processRuntime struct{ h *Host }

func (r processRuntime) start(ctx context.Context, s *spec.Spec, in run.AgentInput, stdout, stderr *capturedStream) (runningAgent, error) {
	cmd := exec.Command("sh", "-c", in.Hub.Command)
	cmd.SysProcAttr = groupAttr()
	reaper := r.h.reaper()
	if reaper != nil {
		argv := append(reaper, "--parent", strconv.Itoa(os.Getpid()), "--", "sh", "-c", in.Hub.Command)
		cmd = exec.Command(argv[0], argv[1:]...)
		cmd.SysProcAttr = reaperAttr()
	}
	cmd.Dir = in.Workspace.Dir
	// agent.env's ${VAR}s come from this worker's environment, and nowhere else.
	specEnv, err := s.Agent.ExpandEnv(nil)
	if err != nil {
		return nil, agentError(err.Error() + " on this worker")
	}
	cmd.Env = agentEnv(os.Environ(), specEnv, in)
	cmd.Stdin = nil // /dev/null: the agent is not interactive
	// *os.Files (pipes of our own), not writers: Wait then returns when the shell exits,
	// even if a background child still holds them open.
	cmd.Stdout, cmd.Stderr = stdout.w, stderr.w
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	// The agent holds its own copies; these would keep the pipes open after it ends.
	stdout.w.Close()
	stderr.w.Close()
	p := &processAgent{cmd: cmd, pgid: cmd.Process.Pid, reaped: reaper != nil, ended: make(chan struct{})}
	go func() {
		agentsWaited.Add(1)
		defer agentsWaited.Add(-1)
		awaitExit(cmd.Process) // no OS thread held while the agent runs (wait_linux.go)
		cmd.Wait()
		close(p.ended)
	}()
	return p, nil
}

// agentsWaited counts the agents' processes being waited for.
var agentsWaited atomic.Int64

// agentError is a reason the agent could not start, as AgentResult.Error says it.
type agentError string

func (e agentError) Error() string { return string(e) }

type processAgent struct {
	cmd    *exec.Cmd
	pgid   int
	reaped bool
	ended  chan struct{}
}

func (p *processAgent) done() <-chan struct{} { return p.ended }
func (p *processAgent) describe() string      { return "pid " + strconv.Itoa(p.pgid) }
func (p *processAgent) stop()                 { stopGroup(p.pgid, p.ended, p.reaped) }

func (p *processAgent) finish(context.Context) int {
	// The shell is reaped; whatever it left running in its group goes too.
	killGroup(p.pgid, syscall.SIGKILL)
	return exitCode(p.cmd.ProcessState)
}
