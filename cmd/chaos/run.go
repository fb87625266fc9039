package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"golang.org/x/term"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/crashwall/chaos/activities"
	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/workflows"
)

// RunOptions are the inputs of `chaos run`.
type RunOptions struct {
	IO   *IOStreams
	Spec string
	// SpecData is the spec's text when it is not read from Spec (demo's embedded example;
	// Spec then only names it). The run folder keeps it as spec.yaml, which the manifest
	// and {spec} point at, so nothing refers to a file that is gone after the run.
	SpecData []byte
	Out      string
	// RunsDir is where the run folder <run id> is made when Out is empty (default
	// chaos-runs/<spec>).
	RunsDir     string
	Reps        int
	Only        []string
	Concurrency int
	DryRun      bool
	// PairWith is a run folder, or "latest", whose seeds the plan reuses.
	PairWith     string
	AgentCommand []string
	// Profile takes the place of the spec's agent.profile (how the closing message is read).
	Profile  string
	Temporal TemporalFlags
	// HistoryLimit is passed to the workflow (tests lower it to exercise continue-as-new).
	HistoryLimit int
	// HeartbeatTimeout is passed to the workflow (0: derived from the agent's timeout).
	HeartbeatTimeout time.Duration
	// Now and NewRunID are replaced in tests.
	Now      func() time.Time
	NewRunID func(time.Time) string
}

// NewCmdRun builds `chaos run SPEC [-- AGENT COMMAND...]`.
func NewCmdRun(ios *IOStreams, runF func(context.Context, *RunOptions) error) *cobra.Command {
	opts := &RunOptions{IO: ios, Now: nowFunc, NewRunID: newRunID}
	cmd := &cobra.Command{
		Use:   "run SPEC [flags] [-- AGENT COMMAND...]",
		Short: "Run an experiment: every condition x replicate as a trial, on Temporal",
		Long: `chaos run plans the spec's trials (cells x conditions x replicates), runs them as
Temporal workflows and writes the run folder: manifest.json, verdicts.json, summary.txt
and trials/<cell>/<condition>/<rep>/{record.jsonl,stdout,stderr,result.json}.

With no --temporal it starts an embedded Temporal server (history in a SQLite file under
the data directory) and a worker in this process, and prints the web UI's address.
An agent command after -- (with the same tokens as the spec's) takes the place of the spec's.
Ctrl-C aborts the run: running trials are stopped and torn down, and the folder is written.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dash := cmd.ArgsLenAtDash()
			if dash >= 0 {
				opts.AgentCommand = args[dash:]
				args = args[:dash]
			}
			if len(args) != 1 {
				return badInput(fmt.Errorf("give one spec file (got %d arguments before --)", len(args)))
			}
			opts.Spec = args[0]
			if err := checkResultsOnTemporal(cmd, opts.Temporal); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Out, "out", "", "run folder (default chaos-runs/<spec>/<run id>)")
	cmd.Flags().IntVar(&opts.Reps, "reps", 0, "replicates per condition (default: the spec's)")
	cmd.Flags().StringSliceVar(&opts.Only, "only", nil, "run only these conditions (repeat or comma-separate; see chaos faults SPEC)")
	cmd.Flags().IntVar(&opts.Concurrency, "concurrency", 0, "trials at once (default: the spec's limits.concurrency, else 1)")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "print the plan and exit without starting anything")
	cmd.Flags().DurationVar(&opts.HeartbeatTimeout, "heartbeat-timeout", 0, "how long a trial's worker may go unheard before the trial runs again (default: a fifth of agent.timeout, 1m to 5m)")
	_ = cmd.Flags().MarkHidden("heartbeat-timeout") // for tests that starve a worker
	cmd.Flags().IntVar(&opts.HistoryLimit, "history-limit", 0, "trials a workflow run starts before it continues as new (default 500)")
	_ = cmd.Flags().MarkHidden("history-limit") // for tests of continue-as-new at a small scale
	cmd.Flags().StringVar(&opts.Profile, "profile", "", "how the agent's closing message is read, in place of the spec's agent.profile: "+strings.Join(spec.Profiles, ", "))
	cmd.Flags().StringVar(&opts.PairWith, "pair-with", "", "reuse the seeds of this clean run folder, or of the latest clean run of the spec (latest), for chaos diff")
	addTemporalFlags(cmd, &opts.Temporal)
	addResultsFlags(cmd, &opts.Temporal.Results, true)
	return cmd
}

func addTemporalFlags(cmd *cobra.Command, f *TemporalFlags) {
	cmd.Flags().StringVar(&f.Address, "temporal", "", "Temporal frontend host:port (default: a running chaos server, else an embedded one)")
	cmd.Flags().StringVar(&f.Namespace, "namespace", "", "Temporal namespace (default \"default\")")
	cmd.Flags().StringVar(&f.DataDir, "data-dir", "", "where the embedded server keeps its history and logs (default $XDG_DATA_HOME/chaos)")
}

// agentCommands fills in each cell's agent command as its trials will run it (the wall's
// port and the sandbox as placeholders), one "agent CELL: COMMAND" line per cell, and
// checks that the program each starts can be found where the trial will look for it.
func agentCommands(opts *RunOptions, s *spec.Spec, p *spec.Plan) ([]string, error) {
	template := spec.JoinCommand(opts.AgentCommand)
	if template == "" {
		template = s.Agent.Command
	}
	bin, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the chaos binary: %w", err)
	}
	specPath, _ := filepath.Abs(opts.Spec)
	env, _ := s.Agent.ExpandEnv(nil) // planSpec has checked it
	path, ok := env["PATH"]
	if !ok {
		path = os.Getenv("PATH")
	}
	var lines []string
	seen := map[string]bool{}
	for _, t := range p.Trials {
		if seen[t.Cell] {
			continue
		}
		seen[t.Cell] = true
		cmd, err := activities.PreviewAgentCommand(s, t, template, bin, specPath)
		if err != nil {
			return nil, badInput(err)
		}
		if s.Agent.IsDocker() {
			// The program is looked for in the container, which only a trial makes.
			if len(lines) == 0 {
				lines = append(lines, "agent runtime docker: "+s.Agent.Container.Describe())
			}
		} else if err := activities.CheckAgentExecutable(cmd.Program, s.Workspace, path); err != nil {
			return nil, badInput(fmt.Errorf("cell %s: %w", t.Cell, err))
		}
		// The command as the agent's shell gets it (tokens are references to variables,
		// never values), then the values it refers to.
		lines = append(lines, fmt.Sprintf("agent %s (sh -c): %s", t.Cell, cmd.Command))
		for _, v := range cmd.Vars {
			lines = append(lines, "  "+v)
		}
	}
	return lines, nil
}

// runsDir is the folder that holds this spec's run folders when --out is not given.
func runsDir(opts *RunOptions, s *spec.Spec) string {
	if opts.RunsDir != "" {
		return opts.RunsDir
	}
	return filepath.Join("chaos-runs", spec.PathSafe(s.Name))
}

func nowFunc() time.Time { return time.Now() }

func newRunID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// planPairedRun loads the spec and plans the run, with the seeds of the run --pair-with
// names and the line that says so; every problem is bad input (exit 1).
func planPairedRun(opts *RunOptions) (*spec.Spec, []byte, *spec.Plan, string, error) {
	s, data, p, err := planSpec(opts)
	if err != nil || opts.PairWith == "" {
		return s, data, p, "", err
	}
	line, err := pairPlan(opts, s, p)
	if err != nil {
		return nil, nil, nil, "", err
	}
	return s, data, p, line, nil
}

// planSpec loads the spec and plans the run.
func planSpec(opts *RunOptions) (*spec.Spec, []byte, *spec.Plan, error) {
	data := opts.SpecData
	if data == nil {
		var err error
		if data, err = os.ReadFile(opts.Spec); err != nil {
			return nil, nil, nil, badInput(fmt.Errorf("read the spec: %w", err))
		}
	}
	s, err := spec.Parse(opts.Spec, data)
	if err != nil {
		return nil, nil, nil, badInput(err)
	}
	s.Path = opts.Spec
	// The flags take the ranges and messages of the spec's keys; 0 is the spec's value.
	if msg := spec.ReplicatesProblem("--reps", int64(opts.Reps)); opts.Reps != 0 && msg != "" {
		return nil, nil, nil, badInput(errors.New(msg))
	}
	if msg := spec.ConcurrencyProblem("--concurrency", int64(opts.Concurrency)); msg != "" {
		return nil, nil, nil, badInput(errors.New(msg))
	}
	// workspace.files must stay inside the spec's folder, through links too.
	if err := spec.CheckFiles(s, opts.Spec, filepath.Dir(opts.Spec)); err != nil {
		return nil, nil, nil, badInput(err)
	}
	if s, err = discoverServers(s); err != nil { // real servers: their tools join the spec's
		return nil, nil, nil, badInput(err)
	}
	conds, err := faults.Generate(s)
	if err != nil {
		return nil, nil, nil, badInput(err)
	}
	ids := make([]string, 0, len(conds))
	if len(opts.Only) > 0 {
		for _, want := range opts.Only {
			c, ok := faults.Find(conds, want)
			if !ok {
				return nil, nil, nil, badInput(fmt.Errorf("--only %q: no such condition in %s (conditions: %s)", want, s.Name, strings.Join(faults.IDs(conds), ", ")))
			}
			ids = append(ids, c.ID)
		}
	} else {
		for _, c := range conds {
			ids = append(ids, c.ID)
		}
	}
	if opts.Profile != "" {
		if !slices.Contains(spec.Profiles, opts.Profile) {
			return nil, nil, nil, badInput(fmt.Errorf("unknown --profile %q (known: %s)", opts.Profile, strings.Join(spec.Profiles, ", ")))
		}
		s.Agent.Profile = opts.Profile
	}
	if len(opts.AgentCommand) == 0 && strings.TrimSpace(s.Agent.Command) == "" {
		return nil, nil, nil, badInput(fmt.Errorf("%s names no agent command: add agent.command to the spec, or give one after -- (chaos run %s -- CMD)", opts.Spec, opts.Spec))
	}
	if len(opts.AgentCommand) > 0 {
		if err := spec.CheckTokens(spec.JoinCommand(opts.AgentCommand), s); err != nil {
			return nil, nil, nil, badInput(fmt.Errorf("the agent command after --: %w", err))
		}
	}
	if s.Model.Upstream != "" {
		// ${VAR}s are expanded again where each trial runs; an unset one is caught here.
		if _, err := s.Model.ExpandUpstream(nil); err != nil {
			return nil, nil, nil, badInput(fmt.Errorf("%s: %w", opts.Spec, err))
		}
	}
	if _, err := s.Agent.ExpandEnv(nil); err != nil {
		return nil, nil, nil, badInput(fmt.Errorf("%s: %w", opts.Spec, err))
	}
	p, err := spec.NewPlan(s, ids, opts.Reps, opts.Concurrency)
	if err != nil {
		return nil, nil, nil, badInput(err)
	}
	return s, data, p, nil
}

func runRun(ctx context.Context, opts *RunOptions) error {
	s, data, plan, paired, err := planPairedRun(opts)
	if err != nil {
		return err
	}
	commands, err := agentCommands(opts, s, plan)
	if err != nil {
		return err
	}
	fmt.Fprintln(opts.IO.Out, plan.Summary())
	if paired != "" {
		fmt.Fprintln(opts.IO.Out, paired)
	}
	if opts.DryRun {
		for _, c := range commands {
			fmt.Fprintln(opts.IO.Out, c)
		}
		return nil
	}
	now := opts.Now()
	runID := opts.NewRunID(now)
	out := opts.Out
	if out == "" {
		out = filepath.Join(runsDir(opts, s), runID)
	}
	if out, err = filepath.Abs(out); err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return badInput(fmt.Errorf("create the run folder: %w", err))
	}
	specPath, _ := filepath.Abs(opts.Spec)
	if opts.SpecData != nil {
		specPath = filepath.Join(out, "spec.yaml")
		if err := os.WriteFile(specPath, opts.SpecData, 0o644); err != nil {
			return fmt.Errorf("keep the spec in the run folder: %w", err)
		}
	}

	// The run is not stopped by Ctrl-C directly: the first one sends the abort signal and
	// the run tears its trials down and writes its folder.
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	flags := opts.Temporal
	flags.TaskQueue, flags.NewRun = run.EmbeddedTaskQueue(runID), true
	c, err := connect(cctx, flags, true, "run-"+runID)
	if err != nil {
		return err
	}
	defer c.Close()
	if c.Note != "" {
		fmt.Fprintln(opts.IO.ErrOut, c.Note)
	}
	if c.UI != "" {
		fmt.Fprintf(opts.IO.Out, "Temporal web UI: %s/namespaces/%s/workflows/%s\n", c.UI, namespace(opts.Temporal), run.ExperimentWorkflowID(runID))
	}
	fmt.Fprintf(opts.IO.Out, "run %s -> %s\n", runID, out)

	in := run.ExperimentInput{
		RunID: runID, Spec: run.SpecRef{Name: s.Name, Path: specPath, YAML: data, Profile: opts.Profile}, Plan: *plan,
		OutDir: out, AgentCommand: spec.JoinCommand(opts.AgentCommand), Started: now.UTC(),
		HistoryLimit: opts.HistoryLimit, AgentTimeout: time.Duration(s.Agent.Timeout), HeartbeatTimeout: opts.HeartbeatTimeout,
	}
	wf, err := c.Client.ExecuteWorkflow(cctx, client.StartWorkflowOptions{ID: run.ExperimentWorkflowID(runID), TaskQueue: c.TaskQueue}, workflows.ExperimentWorkflow, in)
	if err != nil {
		return unexpected(c, fmt.Errorf("start the run: %w", err))
	}

	res, err := followRun(ctx, cctx, opts.IO, c, wf.GetID(), len(plan.Trials))
	if err != nil {
		return err
	}
	printSummary(opts.IO, res)
	if res.NeverArmed != "" {
		return unexpected(c, fmt.Errorf("the run stopped: %s: point the agent's model client at {llm_url} (its base URL setting, e.g. OPENAI_BASE_URL or ANTHROPIC_BASE_URL)", res.NeverArmed))
	}
	unscorable := res.Summary.Unscorable
	if res.Results != nil { // a run started before results stayed on disk
		if err := noModelCalls(s, res.Results); err != nil {
			return err
		}
		unscorable = report.Unscorable(res.Results)
	} else if err := noModelCallsIn(s, res.Summary.ModelTrials, res.Summary.ModelCalls); err != nil {
		return err
	}
	// A run someone aborted says so itself; it exits 0 as it did, its warnings printed.
	if unscorable && res.Aborted == "" {
		return &ExitError{Code: ExitNoScore, Err: fmt.Errorf("no trial of run %s could be scored, so it has no rate: see the warnings above and %s",
			res.RunID, filepath.Join(res.OutDir, "summary.txt"))}
	}
	return nil
}

// followRun shows the run's progress until it ends and returns its result. The first
// Ctrl-C (ctx done) asks the run to abort; cctx is what the client calls with, which
// outlives ctx so that the aborted run can still be followed to its folder.
func followRun(ctx, cctx context.Context, ios *IOStreams, c *conn, workflowID string, total int) (run.ExperimentResult, error) {
	done := make(chan error, 1)
	lost := make(chan error, 1)
	var res run.ExperimentResult
	go func() {
		// The run lives in the server, not in this process: while the server is away
		// (killed, restarting) the run is not over, and its result comes when it is back.
		for {
			err := c.Client.GetWorkflow(cctx, workflowID, "").Get(cctx, &res)
			if err == nil || !serverAway(err) || cctx.Err() != nil {
				done <- err
				return
			}
			select {
			case lost <- err:
			default:
			}
			select {
			case <-cctx.Done():
			case <-time.After(2 * time.Second):
			}
		}
	}()
	prog := newProgressPrinter(ios, total)
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	interrupted, waiting := false, false
	sayWaiting := func(err error) {
		if !waiting {
			waiting = true
			prog.finish()
			fmt.Fprintf(ios.ErrOut, "waiting for the Temporal server to come back (%s); the run goes on there, and this follows it when it does\n", oneLine(err))
		}
	}
	for {
		select {
		case err := <-done:
			prog.finish()
			if err != nil {
				return res, unexpected(c, fmt.Errorf("the run failed: %w", err))
			}
			return res, nil
		case err := <-lost:
			sayWaiting(err)
		case <-ctx.Done():
			if !interrupted {
				interrupted = true
				fmt.Fprintln(ios.ErrOut, "\ninterrupted: aborting the run (stopping and tearing down running trials)...")
				_ = c.Client.SignalWorkflow(cctx, workflowID, "", run.SignalAbort, "interrupted by the user")
			}
		case <-tick.C:
			// A query to a server that is gone would wait for it for ever: each has its
			// own deadline, and a server away is said once.
			qctx, cancel := context.WithTimeout(cctx, 10*time.Second)
			v, err := c.Client.QueryWorkflow(qctx, workflowID, "", run.QueryProgress)
			cancel()
			if err != nil && serverAway(err) {
				sayWaiting(err)
			}
			if err == nil {
				if waiting {
					waiting = false
					fmt.Fprintln(ios.ErrOut, "the Temporal server is back; following the run")
				}
				var p run.Progress
				if v.Get(&p) == nil {
					prog.update(p)
				}
			}
		}
	}
}

// serverAway says err is the server not answering (down, restarting, or too slow), not
// the run's own failure.
func serverAway(err error) bool {
	var unavailable *serviceerror.Unavailable
	var deadline *serviceerror.DeadlineExceeded
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded:
		return true
	}
	return errors.As(err, &unavailable) || errors.As(err, &deadline) || errors.Is(err, context.DeadlineExceeded)
}

// oneLine is err's message on one line, shortened.
func oneLine(err error) string {
	s := strings.Join(strings.Fields(err.Error()), " ")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

// unexpected marks an error as an unexpected failure (exit 3), with the log's path.
func unexpected(c *conn, err error) error {
	if c != nil && c.LogPath != "" {
		err = fmt.Errorf("%w\ndetails are in %s", err, c.LogPath)
	}
	return &ExitError{Code: ExitUnexpected, Err: err}
}

func printSummary(ios *IOStreams, res run.ExperimentResult) {
	fmt.Fprintf(ios.Out, "\n%d trials", res.Summary.Trials)
	if res.Aborted != "" {
		fmt.Fprintf(ios.Out, " (run aborted: %s)", res.Aborted)
	}
	fmt.Fprintln(ios.Out)
	keys := sortedKeys(res.Summary.ByVerdict)
	for _, k := range keys {
		fmt.Fprintf(ios.Out, "  %-20s %d\n", k, res.Summary.ByVerdict[k])
	}
	// What must be known before any rate is read is printed before the rates.
	warnings, notCorrect, cells := res.Summary.Warnings, res.Summary.CleanNotCorrect, res.Summary.Cells
	if res.Results != nil { // a run started before results stayed on disk
		warnings, notCorrect, cells = report.Warnings(res.Results), report.CleanNotCorrect(res.Results), headline(res.Results)
	}
	if len(warnings) > 0 {
		fmt.Fprintln(ios.Out)
	}
	for _, w := range warnings {
		fmt.Fprintln(ios.Out, "warning: "+w)
	}
	printHeadline(ios, cells, len(notCorrect) > 0)
	fmt.Fprintf(ios.Out, "\nrun folder: %s\n", res.OutDir)
	fmt.Fprintf(ios.Out, "summary:    %s\n", filepath.Join(res.OutDir, "summary.txt"))
	fmt.Fprintf(ios.Out, "report:     %s\n", filepath.Join(res.OutDir, "report.html"))
	if res.Summary.ResultsDB != "" {
		fmt.Fprintln(ios.ErrOut, "warning: "+res.Summary.ResultsDB)
	}
}

// printHeadline prints the number the run exists for, per cell: how often the agent said
// "done" when the world was wrong, over the scored trials, with its 80% interval.
func printHeadline(ios *IOStreams, byCell map[string]run.CellCount, notComparable bool) {
	cells := make([]string, 0, len(byCell))
	for cell := range byCell {
		cells = append(cells, cell)
	}
	sort.Strings(cells)
	heading := "silent wrong (said done, world wrong), over scored trials, 80% interval:"
	if notComparable {
		heading = "silent wrong (said done, world wrong), over scored trials, 80% interval; NOT comparable: clean is not correct in every scored trial, so the other conditions cannot be read against it:"
	}
	fmt.Fprintln(ios.Out, "\n"+heading)
	for _, cell := range cells {
		c := byCell[cell]
		fmt.Fprintf(ios.Out, "  %-20s %s\n", cell, report.NewRate(c.SilentWrong, c.Scored))
	}
}

// headline counts, per cell, the scored trials and the silent wrong ones, as Aggregate
// does into run.Summary.Cells.
func headline(results []run.TrialResult) map[string]run.CellCount {
	byCell := map[string]run.CellCount{}
	for _, r := range results {
		c := byCell[r.Cell]
		if report.Scored(r.Verdict) {
			c.Scored++
			if r.Verdict == report.SilentWrong {
				c.SilentWrong++
			}
		}
		byCell[r.Cell] = c
	}
	return byCell
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// progressPrinter shows progress: a bar redrawn in place on a terminal, a plain line per
// change otherwise (CI logs).
type progressPrinter struct {
	ios   *IOStreams
	total int
	tty   bool
	start time.Time
	last  string
}

func newProgressPrinter(ios *IOStreams, total int) *progressPrinter {
	tty := false
	if f, ok := ios.ErrOut.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	return &progressPrinter{ios: ios, total: total, tty: tty, start: time.Now()}
}

func (p *progressPrinter) update(pr run.Progress) {
	var parts []string
	for _, k := range sortedKeys(pr.ByOutcome) {
		parts = append(parts, fmt.Sprintf("%s %d", k, pr.ByOutcome[k]))
	}
	left := ""
	if pr.Done > 0 && pr.Done < pr.Total {
		per := time.Since(p.start) / time.Duration(pr.Done)
		left = fmt.Sprintf(", about %s left", (per * time.Duration(pr.Total-pr.Done)).Round(time.Second))
	}
	counts := fmt.Sprintf("%d/%d trials done, %d running", pr.Done, pr.Total, pr.Running)
	if len(parts) > 0 {
		counts += " (" + strings.Join(parts, ", ") + ")"
	}
	if p.tty {
		width := 24
		filled := 0
		if pr.Total > 0 {
			filled = width * pr.Done / pr.Total
		}
		fmt.Fprintf(p.ios.ErrOut, "\r\033[K[%s%s] %s%s", strings.Repeat("#", filled), strings.Repeat("-", width-filled), counts, left)
		return
	}
	if counts != p.last {
		fmt.Fprintln(p.ios.ErrOut, counts+left)
		p.last = counts
	}
}

func (p *progressPrinter) finish() {
	if p.tty {
		fmt.Fprintln(p.ios.ErrOut)
	}
}
