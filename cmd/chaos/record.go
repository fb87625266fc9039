package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/crashwall/chaos/proxies/upstream"
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
