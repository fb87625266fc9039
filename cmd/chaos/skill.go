package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/crashwall/chaos/mcpserver"
	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/skills"
	"github.com/crashwall/chaos/worker"
)

// SkillOptions are chaos skill list's.
type SkillOptions struct {
	IO      *IOStreams
	Project string
	DataDir string
	JSON    bool
}

// NewCmdSkill is chaos skill: the Claude Code skills on this machine.
func NewCmdSkill(ios *IOStreams) *cobra.Command {
	opts := &SkillOptions{IO: ios}
	cmd := &cobra.Command{Use: "skill", Short: "Claude Code skills and the MCP servers they use"}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the skills (~/.claude/skills, .claude/skills) and the MCP servers they can use",
		Long: `List the Claude Code skills of the user (~/.claude/skills) and of the project
(.claude/skills), and the MCP servers they can use: the user's and the project's Claude
Code MCP configuration (~/.claude.json, .mcp.json). A server wrapped by chaos proxy is shown
as the real server behind it. Header and env values are never shown: a value written in
the configuration is replaced by a ${VAR} reference, which is what a spec should hold.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return skillList(opts) },
	}
	list.Flags().StringVar(&opts.Project, "project", "", "the project folder (default the working directory)")
	list.Flags().StringVar(&opts.DataDir, "data-dir", "", "chaos's data folder, where chaos proxy keeps the servers it wraps (default $XDG_DATA_HOME/chaos)")
	list.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	cmd.AddCommand(list, newCmdSkillTest(ios))
	return cmd
}

func skillOptions(project, dataDir string) (skills.Options, error) {
	if dataDir == "" {
		var err error
		if dataDir, err = worker.DefaultDataDir(); err != nil {
			return skills.Options{}, err
		}
	}
	return skills.Options{Project: project, ProxyDir: filepath.Join(dataDir, "proxy")}, nil
}

func skillList(opts *SkillOptions) error {
	o, err := skillOptions(opts.Project, opts.DataDir)
	if err != nil {
		return err
	}
	f, err := skills.Discover(o)
	if err != nil {
		return err
	}
	out := opts.IO.Out
	if opts.JSON {
		b, _ := json.MarshalIndent(f, "", "  ")
		fmt.Fprintln(out, string(b))
		return nil
	}
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SKILL\tSCOPE\tSERVERS\tDESCRIPTION")
	for _, s := range f.Skills {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Name, s.Scope, orDash(strings.Join(s.Servers, ", ")), clip(s.Description, 70))
	}
	if len(f.Skills) == 0 {
		fmt.Fprintln(tw, "(none)\t\t\t")
	}
	fmt.Fprintln(tw, "\t\t\t")
	fmt.Fprintln(tw, "SERVER\tSCOPE\tTYPE\tRUNS")
	for _, s := range f.Servers {
		what := s.URL
		if s.Type == "stdio" {
			what = strings.Join(append([]string{s.Command}, s.Args...), " ")
		}
		var notes []string
		if s.WrappedBy != "" {
			notes = append(notes, "unwrapped from: "+s.WrappedBy)
		}
		for _, m := range []map[string]string{s.Env, s.Headers} {
			for k, v := range m {
				notes = append(notes, k+"="+v)
			}
		}
		if len(notes) > 0 {
			what += "  (" + strings.Join(notes, "; ") + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Name, s.Scope, s.Type, what)
	}
	if len(f.Servers) == 0 {
		fmt.Fprintln(tw, "(none)\t\t\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range f.Problems {
		fmt.Fprintln(opts.IO.ErrOut, "warning: "+p)
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// McpOptions are chaos mcp's.
type McpOptions struct {
	IO      *IOStreams
	Dir     string
	DataDir string
}

// NewCmdMcp is chaos mcp: chaos as an MCP server over stdio.
func NewCmdMcp(ios *IOStreams) *cobra.Command {
	opts := &McpOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve chaos as an MCP server over stdio (list skills and specs, plan, start, follow runs)",
		Long: `Serve chaos as an MCP server over stdio, for an agent such as Claude Code:
  claude mcp add chaos -- chaos mcp
Tools: list_skills, list_specs, plan_run (the plan, its estimated cost and a
confirmation), plan_skill_test (a skill's clean run, which makes real calls: refused
unless allow_real_calls; the plan, its estimate and a confirmation), start_run (refused
without that confirmation), run_status, run_results. Runs are chaos run processes
writing chaos-runs/<spec>/<run> under --dir (a skill test's: its folder's runs/).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return mcpRun(cmd.Context(), opts) },
	}
	cmd.Flags().StringVar(&opts.Dir, "dir", "", "the folder specs and runs are relative to (default the working directory)")
	cmd.Flags().StringVar(&opts.DataDir, "data-dir", "", "passed to chaos run (default $XDG_DATA_HOME/chaos)")
	return cmd
}

func mcpRun(ctx context.Context, opts *McpOptions) error {
	bin, err := os.Executable()
	if err != nil {
		return err
	}
	so, err := skillOptions(opts.Dir, opts.DataDir)
	if err != nil {
		return err
	}
	srv, err := mcpserver.New(mcpserver.Options{Chaos: bin, Dir: opts.Dir, DataDir: opts.DataDir, Skills: so, Version: hub.Version})
	if err != nil {
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return srv.Run(ctx, &mcp.StdioTransport{})
}
