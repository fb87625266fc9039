package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/proxies/httpwall"
	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/proxies/stdio"
	"github.com/crashwall/chaos/proxies/upstream"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/spec/infer"
)

// recordSession is one run of an agent against real servers through a recording wall
// with no fault (chaos record, and chaos skill test's clean run).
type recordSession struct {
	IO         *IOStreams
	Chaos      string
	Name, Task string
	// Argv is the agent command, with the tokens of recordTokens.
	Argv       []string
	Servers    []spec.Server
	RecordPath string
	Timeout    time.Duration
	Now        func() time.Time
	// Prepare, when set, fills the sandbox before the agent starts.
	Prepare func(sandbox string) error
}

// recordAgent runs the agent once through the recording wall and hands what it did to
// use while its sandbox is still there.
func recordAgent(ctx context.Context, opts recordSession, use func(infer.Recording) error) error {
	bin := opts.Chaos
	if bin == "" {
		var err error
		if bin, err = os.Executable(); err != nil {
			return err
		}
	}
	sandbox, err := os.MkdirTemp("", "chaos-record-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(sandbox)
	if opts.Prepare != nil {
		if err := opts.Prepare(sandbox); err != nil {
			return err
		}
	}
	name, servers, recPath := opts.Name, opts.Servers, opts.RecordPath
	s := &spec.Spec{Name: name, Format: "chaos", Tasks: []spec.Task{{ID: name, Prompt: opts.Task}}, Servers: servers, Replicates: 1, Seed: 1}
	up, err := upstream.OpenUpstream(ctx, upstream.UpstreamConfig{Spec: s, Sandbox: sandbox})
	if err != nil {
		return badInput(err)
	}
	rec, err := record.Open(recPath)
	if err != nil {
		up.Close()
		return err
	}
	hub, err := hub.NewHub(hub.Config{Spec: up.Spec(), Condition: faults.Condition{ID: faults.CleanID, SuccessPossible: true}, Seed: 1, Trial: "record", Record: rec, Source: up})
	if err != nil {
		up.Close()
		return err
	}
	classes := up.Classifications()
	tools := up.Tools()
	srv, err := httpwall.Serve(hub, "")
	if err != nil {
		hub.Close("the wall could not listen: " + err.Error())
		return err
	}
	wall, err := stdio.OpenStdioWall(srv, bin, os.TempDir()) // not in the sandbox, where the agent looks
	if err != nil {
		fmt.Fprintf(opts.IO.ErrOut, "chaos record: {wall} bridges over HTTP: %v\n", err)
	}
	tokens := map[string]string{
		"task": opts.Task, "wall": wall.Command, "wall_url": srv.URL,
		"mcp_config": wall.MCPConfig, "codex_config": wall.CodexConfig, "sandbox": sandbox, "chaos": bin,
	}
	// As in a trial: the command refers to the values through variables, never holds one.
	command, probs := spec.FillCommand(spec.JoinCommand(opts.Argv), func(name string) bool { _, ok := tokens[name]; return ok })
	if len(probs) > 0 {
		srv.Close()
		hub.Close("the agent command was refused")
		return badInput(fmt.Errorf("the agent command after --: %s", probs[0].Msg))
	}
	fmt.Fprintf(opts.IO.ErrOut, "chaos record: running the agent against %d real server(s) through the wall at %s\n", len(servers), srv.URL)
	actx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	cmd := exec.CommandContext(actx, "sh", "-c", command)
	cmd.Env = append(os.Environ(), spec.TokenEnv(tokens)...)
	cmd.Dir = sandbox
	var stdout bytes.Buffer
	cmd.Stdout = io.MultiWriter(&stdout, opts.IO.ErrOut)
	cmd.Stderr = opts.IO.ErrOut
	cmd.WaitDelay = 2 * time.Second
	runErr := cmd.Run()
	wall.Close()
	srv.Close()
	hub.Close(run.AgentExited)
	if actx.Err() != nil {
		return badInput(fmt.Errorf("the agent ran past --timeout %s; no spec was written (the record is at %s)", opts.Timeout, recPath))
	}
	var exitErr *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exitErr) {
		return badInput(fmt.Errorf("the agent command could not run: %w", runErr))
	}
	log, err := record.ReadFile(recPath)
	if err != nil {
		return fmt.Errorf("read the record of the run: %w", err)
	}
	return use(infer.Recording{
		Name: opts.Name, Task: opts.Task, Argv: opts.Argv, Servers: servers, Classes: classes, Tools: tools,
		Log: log, Stdout: stdout.String(), Sandbox: sandbox, Now: opts.Now(), ExitCode: cmd.ProcessState.ExitCode(),
	})
}
