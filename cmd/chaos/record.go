package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/proxies/httpwall"
	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/proxies/stdio"
	"github.com/crashwall/chaos/proxies/upstream"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/spec/infer"
)

// RecordOptions are the inputs of `chaos record`.
type RecordOptions struct {
	IO             *IOStreams
	AllowRealCalls bool
	Task           string
	Servers        []string
	Out            string
	Timeout        time.Duration
	AgentCommand   []string
	// Chaos is the chaos binary for {wall} and {chaos} (default: this one).
	Chaos string
	// Now is replaced in tests.
	Now func() time.Time
}

// NewCmdRecord builds `chaos record`.
func NewCmdRecord(ios *IOStreams, runF func(context.Context, *RecordOptions) error) *cobra.Command {
	opts := &RecordOptions{IO: ios, Now: time.Now}
	cmd := &cobra.Command{
		Use:   "record --allow-real-calls --task TEXT --server CMD [--server CMD...] --out SPEC -- AGENT COMMAND...",
		Short: "Run an agent once against real MCP servers and write a spec from what it did",
		Long: `chaos record runs the agent command once, against the real servers through a
recording wall with no fault, and writes a spec: the servers, which of their tools
write and which read back, each tool's real reply (so a fabricated success looks like
it), mcp probes that read back the values the agent wrote, and the agent command.
Every inference is listed as a comment at the top of the spec: read them.

The run has real side effects (whatever the agent writes, deletes or sends is done), so
chaos record refuses to start without --allow-real-calls.

--server takes a command line (leading NAME=value words are its environment; {sandbox}
is the run's working folder), an http(s) URL of a streamable HTTP server, or the URL of
a server that speaks the older HTTP+SSE transport with sse+ before it
(sse+https://host/sse; the spec says transport: sse). The agent
command takes the tokens {task} {wall} {wall_url} {mcp_config} {sandbox} {chaos}.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				opts.AgentCommand = args[dash:]
				args = args[:dash]
			}
			if len(args) > 0 {
				return badInput(fmt.Errorf("unexpected arguments %q: the agent command goes after --", args))
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return recordRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.AllowRealCalls, "allow-real-calls", false, "confirm that the agent may make real calls with real side effects")
	cmd.Flags().StringVar(&opts.Task, "task", "", "what the agent is asked to do ({task})")
	cmd.Flags().StringArrayVar(&opts.Servers, "server", nil, "a real MCP server: a command line, an http(s) URL (streamable HTTP) or sse+http(s)://... (SSE) (repeat for several)")
	cmd.Flags().StringVar(&opts.Out, "out", "", "where to write the spec")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", 10*time.Minute, "the longest the agent may run")
	return cmd
}

// recordTokens are the tokens chaos record fills in.
var recordTokens = []string{"task", "wall", "wall_url", "mcp_config", "codex_config", "sandbox", "chaos"}

var tokenRef = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_.]*)\}`)

func recordRun(ctx context.Context, opts *RecordOptions) error {
	if !opts.AllowRealCalls {
		return badInput(errors.New("chaos record runs the agent against the real servers, and what it does there is real (writes, deletes, messages sent); pass --allow-real-calls to go ahead"))
	}
	switch {
	case strings.TrimSpace(opts.Task) == "":
		return badInput(errors.New("--task is required: what the agent is asked to do"))
	case len(opts.Servers) == 0:
		return badInput(errors.New("--server is required: the real MCP server(s) the agent uses"))
	case opts.Out == "":
		return badInput(errors.New("--out is required: where to write the spec"))
	case len(opts.AgentCommand) == 0:
		return badInput(errors.New("give the agent command after --: chaos record ... -- AGENT COMMAND"))
	}
	for _, w := range opts.AgentCommand {
		for _, m := range tokenRef.FindAllStringSubmatch(w, -1) {
			if !slices.Contains(recordTokens, m[1]) {
				return badInput(fmt.Errorf("the agent command holds {%s}, which chaos record cannot fill in (it fills in %s)", m[1], "{"+strings.Join(recordTokens, "} {")+"}"))
			}
		}
	}
	if _, probs := spec.FillCommand(spec.JoinCommand(opts.AgentCommand), func(name string) bool { return slices.Contains(recordTokens, name) }); len(probs) > 0 {
		return badInput(fmt.Errorf("the agent command after --: %s", probs[0].Msg))
	}
	name := strings.TrimSuffix(filepath.Base(opts.Out), filepath.Ext(opts.Out))
	var servers []spec.Server
	var taken []string
	for _, line := range opts.Servers {
		sv, err := upstream.ServerFromCommand(infer.ServerName(line, taken), line)
		if err != nil {
			return badInput(fmt.Errorf("--server %q: %w", line, err))
		}
		taken = append(taken, sv.Name)
		servers = append(servers, sv)
	}
	recPath := strings.TrimSuffix(opts.Out, filepath.Ext(opts.Out)) + ".record.jsonl"
	var text, summary string
	err := recordAgent(ctx, recordSession{
		IO: opts.IO, Chaos: opts.Chaos, Name: name, Task: opts.Task, Argv: opts.AgentCommand,
		Servers: servers, RecordPath: recPath, Timeout: opts.Timeout, Now: opts.Now,
	}, func(in infer.Recording) error {
		var err error
		text, summary, err = infer.Spec(in)
		return err
	})
	if err != nil {
		return err
	}
	if _, err := spec.Parse(opts.Out, []byte(text)); err != nil {
		return fmt.Errorf("the spec chaos record wrote does not load (a bug; it is at %s.rejected): %w", opts.Out, errors.Join(err, os.WriteFile(opts.Out+".rejected", []byte(text), 0o644)))
	}
	if err := os.WriteFile(opts.Out, []byte(text), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.Out, "wrote %s: %s\nthe record of the run is %s\nread the inferences at the top of the spec, then: chaos faults %s; chaos run %s\n", opts.Out, summary, recPath, opts.Out, opts.Out)
	return nil
}

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
	hub.Close("agent exited")
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
