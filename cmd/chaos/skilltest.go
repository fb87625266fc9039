package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/crashwall/chaos/cost"
	"github.com/crashwall/chaos/probes"
	"github.com/crashwall/chaos/proxies/upstream"
	"github.com/crashwall/chaos/skills"
	"github.com/crashwall/chaos/skilltest"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/spec/infer"
	"github.com/crashwall/chaos/within"
)

// SkillTestOptions are chaos skill test's.
type SkillTestOptions struct {
	IO             *IOStreams
	Skill, Prompt  string
	With           []string
	Check          string
	Repeat         int
	Model          string
	Claude         string
	ModelUpstream  string
	AllowRealCalls bool
	Yes            bool
	// PlanOnly stops after the plan (chaos mcp's plan_skill_test starts it later).
	PlanOnly bool
	Project  string
	Out      string
	Timeout  time.Duration
	Temporal TemporalFlags
	// Chaos is the chaos binary for the wall (default: this one); Now is replaced in tests.
	Chaos string
	Now   func() time.Time
}

// defaultSkillModel is the model a skill test pins when --model is not given.
const defaultSkillModel = "claude-sonnet-4-5-20250929"

func newCmdSkillTest(ios *IOStreams) *cobra.Command {
	opts := &SkillTestOptions{IO: ios, Now: time.Now}
	cmd := &cobra.Command{
		Use:   "test SKILL --prompt TEXT --allow-real-calls [flags]",
		Short: "Test a Claude Code skill against faults of its real MCP servers, one chaos run",
		Long: `chaos skill test runs the skill once, clean, with claude -p through a recording wall
in front of the skill's real MCP servers (so it is refused without --allow-real-calls),
plans the fault conditions from the calls it saw (each tool it wrote with: phantom
success, transient and permanent error, phantom failure; two writes or more: a session
drop; each tool it read with: truncated reply, premature read, stale read), shows the
plan and its estimated cost and asks to go on (--yes skips the question; with no
terminal and no --yes it stops), then runs every condition --repeat times as one chaos
run on Temporal. Every trial is a fresh sandbox holding the skill (.claude/skills/SKILL)
and the --with inputs, copied fresh; claude -p has the wall as its only MCP server and
the skill's tools allowed (--allowedTools mcp__chaos__TOOL...).

The test's folder (--out, default chaos-skill-tests/SKILL) keeps the spec, the clean run's
record, the copies and the runs (runs/<run id>). --check CMD runs in each sandbox after
the trial and prints {"problems": [...]}: its word on the world overrules the other
checks, both ways, and result.json and the report say so.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Skill = args[0]
			return skillTestRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Prompt, "prompt", "", "what claude -p is asked to do (the skill should be what does it)")
	f.BoolVar(&opts.AllowRealCalls, "allow-real-calls", false, "confirm that the clean run and the trials may make real calls with real side effects")
	f.StringArrayVar(&opts.With, "with", nil, "an input file or folder every trial's sandbox gets a fresh copy of, by its base name (repeat)")
	f.StringVar(&opts.Check, "check", "", `a command run in the sandbox after each trial that prints {"problems": [...]}; it overrules the world verdict`)
	f.IntVar(&opts.Repeat, "repeat", 1, "trials per condition")
	f.StringVar(&opts.Model, "model", defaultSkillModel, "the model every trial uses (claude --model), kept in the run's manifest")
	f.StringVar(&opts.Claude, "claude", "claude", "the claude program")
	f.StringVar(&opts.ModelUpstream, "model-upstream", "", "put the model proxy in front of Claude Code, forwarding to this Anthropic API base URL (tokens and cost per trial)")
	f.BoolVar(&opts.Yes, "yes", false, "start the run without asking")
	f.BoolVar(&opts.PlanOnly, "plan-only", false, "stop after the clean run and the plan: print how to start it (chaos run SPEC --only ...), start nothing")
	f.StringVar(&opts.Project, "project", "", "the project folder (default the working directory)")
	f.StringVar(&opts.Out, "out", "", "the skill test's folder (default chaos-skill-tests/SKILL in the project)")
	f.DurationVar(&opts.Timeout, "timeout", 10*time.Minute, "the longest claude -p may run, in the clean run and in each trial")
	addTemporalFlags(cmd, &opts.Temporal)
	return cmd
}

func skillTestRun(ctx context.Context, opts *SkillTestOptions) error {
	switch {
	case !opts.AllowRealCalls:
		return badInput(errors.New("chaos skill test runs the skill against its real MCP servers, and what it does there is real (writes, deletes, messages sent), once clean and in every trial; pass --allow-real-calls to go ahead"))
	case strings.TrimSpace(opts.Prompt) == "":
		return badInput(errors.New("--prompt is required: what claude -p is asked to do with the skill"))
	case opts.Repeat < 1:
		return badInput(fmt.Errorf("--repeat must be 1 or more, got %d", opts.Repeat))
	case strings.TrimSpace(opts.Model) == "":
		return badInput(errors.New("--model is required: the model every trial uses, pinned"))
	case opts.Timeout <= 0:
		return badInput(fmt.Errorf("--timeout must be above 0, got %s", opts.Timeout))
	}
	if opts.Check != "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		if opts.Check, err = resolveCheck(opts.Check, wd); err != nil {
			return badInput(err)
		}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	so, err := skillOptions(opts.Project, opts.Temporal.DataDir)
	if err != nil {
		return err
	}
	found, err := skills.Discover(so)
	if err != nil {
		return err
	}
	sk, servers, err := skilltest.Find(found, opts.Skill)
	if err != nil {
		return badInput(err)
	}
	project := opts.Project
	if project == "" {
		project, _ = os.Getwd()
	}
	dir := opts.Out
	if dir == "" {
		if dir, err = within.Join(filepath.Join(project, "chaos-skill-tests"), spec.PathSafe(sk.Name)); err != nil {
			return badInput(fmt.Errorf("skill %s: %w", sk.Name, err))
		}
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return err
	}
	folder := skilltest.Folder{Dir: dir}
	files, err := folder.Fill(sk.Name, sk.Dir, opts.With)
	if err != nil {
		return badInput(err)
	}
	wall, _, err := upstream.Discover(ctx, &spec.Spec{Name: "skill-" + sk.Name, Servers: servers}, upstream.UpstreamConfig{})
	if err != nil {
		return badInput(fmt.Errorf("reach the skill's servers: %w", err))
	}
	agent := skilltest.Agent{Claude: opts.Claude, Model: opts.Model, AllowedTools: skilltest.AllowedTools(sk, wall.Tools), ThroughProxy: opts.ModelUpstream != ""}

	fmt.Fprintf(opts.IO.Out, "skill %s (%s): servers %s; the clean run first\n", sk.Name, sk.Scope, strings.Join(sk.Servers, ", "))
	var text string
	var plan skilltest.Plan
	var cleanUSD *float64
	err = recordAgent(ctx, recordSession{
		IO: opts.IO, Chaos: opts.Chaos, Name: "skill-" + sk.Name, Task: opts.Prompt, Argv: agent.Argv(true),
		Servers: servers, RecordPath: folder.Record(), Timeout: opts.Timeout, Now: opts.Now,
		Prepare: func(sandbox string) error { return folder.CopyInto(sandbox, files) },
	}, func(in infer.Recording) error {
		inferred, _, err := infer.Spec(in)
		if err != nil {
			return err
		}
		plan = skilltest.NewPlan(in.Log, in.Classes)
		if c, ok := probes.Extract("claude-code", []byte(in.Stdout), nil, in.ExitCode).Fields["cost"].(float64); ok {
			cleanUSD = &c
		}
		text, err = skilltest.Spec(inferred, skilltest.SpecOptions{
			Agent: agent, Timeout: spec.Duration(opts.Timeout), Plan: plan, Repeat: opts.Repeat,
			Files: files, Check: opts.Check, ModelUpstream: opts.ModelUpstream,
		})
		return err
	})
	if err != nil {
		return err
	}
	if _, err := spec.Parse(folder.Spec(), []byte(text)); err != nil {
		return fmt.Errorf("the skill test's spec does not load (a bug; it is at %s.rejected): %w", folder.Spec(), errors.Join(err, os.WriteFile(folder.Spec()+".rejected", []byte(text), 0o644)))
	}
	if err := os.WriteFile(folder.Spec(), []byte(text), 0o644); err != nil {
		return err
	}
	out := opts.IO.Out
	fmt.Fprintf(out, "\n%s", plan.Describe())
	if len(plan.Conditions) == 0 {
		return badInput(fmt.Errorf("the clean run made no call that a fault can hit, so there is nothing to test (its record is %s): check that the prompt makes claude use the skill", folder.Record()))
	}
	trials := len(plan.IDs()) * opts.Repeat
	estimate := "estimated cost: unknown (the clean run's claude -p said nothing of its cost)"
	if cleanUSD != nil {
		estimate = fmt.Sprintf("estimated cost: %s (%d trials at %s, what the clean run cost by Claude Code's total_cost_usd)", cost.Format(cost.Round(*cleanUSD*float64(trials))), trials, cost.Format(*cleanUSD))
	}
	fmt.Fprintf(out, "%d trials (%d conditions x %d), model %s\n%s\nspec: %s\n", trials, len(plan.IDs()), opts.Repeat, opts.Model, estimate, folder.Spec())
	if opts.PlanOnly {
		fmt.Fprintf(out, "only: %s\nnothing was started (--plan-only); to start it: chaos run %s --only %s\n", strings.Join(plan.IDs(), ","), spec.ShellQuote(folder.Spec()), strings.Join(plan.IDs(), ","))
		return nil
	}
	if err := confirmSkillTest(opts); err != nil {
		return err
	}
	return runRun(ctx, &RunOptions{
		IO: opts.IO, Spec: folder.Spec(), RunsDir: filepath.Join(dir, "runs"), Only: plan.IDs(),
		Temporal: opts.Temporal, Now: nowFunc, NewRunID: newRunID, Estimated: true,
	})
}

// confirmSkillTest asks on the terminal whether to start the run; --yes skips it, and
// with no terminal to ask on it is a refusal that says how to go on.
func confirmSkillTest(opts *SkillTestOptions) error {
	if opts.Yes {
		return nil
	}
	f, ok := opts.IO.In.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return badInput(errors.New("nothing was started: there is no terminal to ask on; read the plan above and pass --yes to start the run"))
	}
	fmt.Fprint(opts.IO.Out, "start the run? [y/N] ")
	line, _ := bufio.NewReader(f).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
		return badInput(errors.New("nothing was started: the plan was not confirmed"))
	}
	return nil
}

// resolveCheck makes --check's program, when it is a relative path (./check.sh,
// scripts/check.py), the file it names in wd, the folder chaos was run in: the check runs
// in each trial's sandbox, where the path would name nothing and every trial would fail
// after it had spent its money. A path that names no file is refused now.
func resolveCheck(check, wd string) (string, error) {
	trimmed := strings.TrimLeft(check, " \t")
	prog, rest, _ := strings.Cut(trimmed, " ")
	if !strings.Contains(prog, "/") || filepath.IsAbs(prog) || strings.ContainsAny(prog, "'\"$`\\") {
		return check, nil
	}
	abs := filepath.Join(wd, prog)
	if st, err := os.Stat(abs); err != nil || st.IsDir() {
		return "", fmt.Errorf("--check %s: %s is no file (a relative path is read from the folder chaos runs in, %s); give the check's path from there, or an absolute one", check, prog, wd)
	}
	if rest == "" {
		return spec.ShellQuote(abs), nil
	}
	return spec.ShellQuote(abs) + " " + rest, nil
}
