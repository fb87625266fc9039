package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crashwall/chaos/agents"
	"github.com/crashwall/chaos/spec"
)

// AgentOptions are the inputs of `chaos agent scripted`.
type AgentOptions struct {
	IO          *IOStreams
	Style       string
	Transport   string
	WallCommand string
	URL         string
	Spec        string
	// Script is a declared script of calls, for real servers (instead of Spec).
	Script string
}

// NewCmdAgent builds `chaos agent`, the reference agents.
func NewCmdAgent(ios *IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Reference agents with no model behind them, for tests and the demo",
	}
	cmd.AddCommand(NewCmdAgentScripted(ios, nil))
	return cmd
}

// NewCmdAgentScripted builds `chaos agent scripted`.
func NewCmdAgentScripted(ios *IOStreams, runF func(context.Context, *AgentOptions) error) *cobra.Command {
	opts := &AgentOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "scripted --spec SPEC --style STYLE --transport stdio|http|rest (--wall-command CMD | --url URL)",
		Short: "Perform a spec's task by a small script through the wall and print a closing message",
		Long: `A reference agent: it reads every source tool, writes every value the spec's state
checks expect, and prints a closing message ending in a STATUS line.

Styles:
  blind      says "Done" whatever happened
  verifying  reads every write back, rewrites what did not stick, reports what it could not confirm
  retrying   retries a failed call up to three times, never reads back
  honest     reports any error it saw, never retries`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return agentRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Style, "style", agents.Blind, "how the agent behaves: "+strings.Join(agents.Styles, ", "))
	cmd.Flags().StringVar(&opts.Transport, "transport", "stdio", "how to reach the wall: stdio, http or rest")
	cmd.Flags().StringVar(&opts.WallCommand, "wall-command", "", "for stdio: the command that starts the wall ({wall})")
	cmd.Flags().StringVar(&opts.URL, "url", "", "for http: the MCP endpoint ({wall_url}/mcp); for rest: the wall's base URL ({wall_url})")
	cmd.Flags().StringVar(&opts.Spec, "spec", "", "the experiment spec whose task to perform ({spec})")
	cmd.Flags().StringVar(&opts.Script, "script", "", "a declared script of calls (sources, writes and their checks), for real servers; instead of --spec (see docs/upstream.md)")
	return cmd
}

func agentRun(ctx context.Context, opts *AgentOptions) error {
	if opts.Spec == "" && opts.Script == "" {
		return badInput(fmt.Errorf("--spec is required: the reference agent derives its script from the spec (or give --script)"))
	}
	var sc *agents.Script
	if opts.Script != "" {
		var err error
		if sc, err = agents.LoadScript(opts.Script); err != nil {
			return badInput(err)
		}
	} else {
		s, err := spec.Load(opts.Spec)
		if err != nil {
			return badInput(err)
		}
		// The trial's task: a spec with several tasks is done one task per trial.
		if sc, err = agents.ScriptForTask(s, os.Getenv(spec.TokenVar("task"))); err != nil {
			return badInput(err)
		}
	}
	c, err := agents.Dial(ctx, opts.Transport, opts.WallCommand, opts.URL)
	if err != nil {
		return badInput(err)
	}
	defer c.Close()
	return agents.Run(ctx, opts.Style, sc, c, opts.IO.Out, opts.IO.ErrOut)
}
