package trial

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
)

// DefaultAgentTimeout is the agent's timeout when the spec gives none.
const DefaultAgentTimeout = 5 * time.Minute

// stopGrace is how long the agent's process group has between SIGTERM and SIGKILL.
const stopGrace = 3 * time.Second

// RunAgent runs the filled-in agent command through `sh -c` in the sandbox, by the spec's
// runtime (runtime.go): its own process group, or a container (agent.runtime: docker),
// with stdout and stderr going to files in the trial folder. On cancel or timeout it
// stops the agent (SIGTERM, then SIGKILL after a
// grace period). After any ending it removes what is left (the group's processes, the
// container), so nothing the agent started outlives the trial.
//
// A command that cannot start is reported in AgentResult.Error, not as an error. A
// cancelled activity returns ctx.Err() once the agent is dead.
func (h *Host) RunAgent(ctx context.Context, in run.AgentInput) (run.AgentResult, error) {
	s, err := h.specOf(in.Trial)
	if err != nil {
		return run.AgentResult{}, err
	}
	if strings.TrimSpace(in.Hub.Command) == "" {
		return run.AgentResult{Error: "the agent command is empty"}, nil
	}
	if in.Workspace.TrialDir == "" {
		return run.AgentResult{}, badInput(errors.New("RunAgent needs the workspace that PrepareWorkspace returned (its trial folder is empty)"))
	}
	timeout := time.Duration(s.Agent.Timeout)
	if timeout <= 0 {
		timeout = DefaultAgentTimeout
	}

	limit := h.outputCap()
	stdout, err := captureTo(filepath.Join(in.Workspace.TrialDir, "stdout"), limit)
	if err != nil {
		return run.AgentResult{}, fmt.Errorf("create the agent's stdout file: %w", err)
	}
	stderr, err := captureTo(filepath.Join(in.Workspace.TrialDir, "stderr"), limit)
	if err != nil {
		stdout.finish(0)
		return run.AgentResult{}, fmt.Errorf("create the agent's stderr file: %w", err)
	}
	// Each stream keeps its last OutputCap bytes, however much the agent writes.
	finishOutput := func(res *run.AgentResult, wait time.Duration) {
		outDropped, oerr := stdout.finish(wait)
		errDropped, eerr := stderr.finish(wait)
		if err := errors.Join(oerr, eerr); err != nil {
			h.logger().Warn("the agent's output was not kept whole", "trial", in.Trial.Trial.ID, "error", err)
		}
		res.Output = outputResult(limit, outDropped, errDropped)
	}

	log := h.logger().With("trial", in.Trial.Trial.ID)
	start := time.Now()
	stdout.start()
	stderr.start()
	agent, err := h.runtimeFor(s).start(ctx, s, in, stdout, stderr)
	if err != nil {
		log.Warn("agent could not start", "runtime", s.Agent.RuntimeName(), "error", err)
		res := run.AgentResult{Error: err.Error()}
		finishOutput(&res, 0)
		return res, nil
	}
	log.Info("agent started", "runtime", s.Agent.RuntimeName(), "agent", agent.describe(), "timeout", timeout)

	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	var res run.AgentResult
	var cancelled bool
wait:
	for {
		select {
		case <-agent.done():
			break wait
		case <-deadline.C:
			res.TimedOut = true
			log.Info("agent timed out; stopping it", "after", timeout)
			agent.stop()
			break wait
		case <-ctx.Done():
			cancelled = true
			log.Info("agent cancelled; stopping it", "cause", context.Cause(ctx))
			agent.stop()
			break wait
		}
	}
	res.ExitCode = agent.finish(ctx)
	finishOutput(&res, stopGrace)
	log.Info("agent ended", "exit_code", res.ExitCode, "timed_out", res.TimedOut, "duration", time.Since(start))
	if s.Operator != nil && !cancelled && !res.TimedOut {
		// The scripted operator answers and the agent is resumed (operator.go).
		cancelled = h.operate(ctx, s, in, &res, start.Add(timeout), log)
	}
	res.Duration = time.Since(start)
	if cancelled {
		return res, ctx.Err()
	}
	return res, nil
}

// stopGroup asks the process group to stop, then kills it after the grace period, and
// waits for the leader to be reaped. Under a reaper (reaped: it leads the group) the kill
// is the reaper's: it kills every process the agent started, in the group or not, and
// ends; only a reaper that has not ended after a second grace period is killed outright.
func stopGroup(pgid int, done <-chan struct{}, reaped bool) {
	killGroup(pgid, syscall.SIGTERM)
	grace := time.NewTimer(stopGrace)
	defer grace.Stop()
	select {
	case <-done:
		return
	case <-grace.C:
	}
	if reaped {
		killAll(pgid)
		grace.Reset(stopGrace)
		select {
		case <-done:
			return
		case <-grace.C:
		}
	}
	killGroup(pgid, syscall.SIGKILL)
	<-done
}

// agentEnv is base (the worker's environment for a process, a bare one for a container), the spec's agent.env (expanded), and the trial's own
// variables (CHAOS_TRIAL_ID, CHAOS_WALL_URL, CHAOS_AXIS_<NAME>), later ones winning.
func agentEnv(base []string, specEnv map[string]string, in run.AgentInput) []string {
	env := base
	keys := make([]string, 0, len(specEnv))
	for k := range specEnv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+specEnv[k])
	}
	env = append(env, "CHAOS_TRIAL_ID="+in.Trial.Trial.ID, "CHAOS_WALL_URL="+in.Hub.URL)
	axes := in.Trial.Trial.Axes
	names := make([]string, 0, len(axes))
	for k := range axes {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		env = append(env, spec.TokenVar(k)+"="+axes[k])
	}
	// The filled command refers to every token's value by its variable (spec.FillCommand);
	// set last, so neither agent.env nor the worker's environment can stand in for one.
	env = append(env, spec.TokenEnv(in.Hub.Tokens)...)
	if bin := in.Hub.Tokens["shim_path"]; bin != "" {
		// The shim's launchers come first on the agent's PATH (the last PATH wins).
		path := bin
		if rest := lastValue(env, "PATH"); rest != "" {
			path += string(filepath.ListSeparator) + rest // never a trailing ":" (the working folder)
		}
		env = append(env, "PATH="+path)
	}
	return env
}

// lastValue is the value of the last name= entry of env.
func lastValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// exitCode is the process's exit code, or 128+signal when a signal ended it, as a shell
// reports it.
func exitCode(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}
