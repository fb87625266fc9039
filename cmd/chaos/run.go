package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/crashwall/chaos/container"
	"github.com/crashwall/chaos/redact"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/trial"
	"github.com/crashwall/chaos/worker"
	"github.com/crashwall/chaos/workflows"
)

// runsDir is the folder that holds this spec's run folders when --out is not given.
func runsDir(opts *RunOptions, s *spec.Spec) string {
	if opts.RunsDir != "" {
		return opts.RunsDir
	}
	return filepath.Join("chaos-runs", spec.PathSafe(s.Name))
}

// withNewRun is flags as a new run connects with them.
func withNewRun(flags TemporalFlags) TemporalFlags {
	flags.NewRun = true
	return flags
}

func nowFunc() time.Time { return time.Now() }

func newRunID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

func runRun(ctx context.Context, opts *RunOptions) error {
	// What the run prints holds no secret value this process knows (docs/record.md#secrets).
	streams := *opts.IO
	streams.Out, streams.ErrOut = redact.Known.EachWrite(streams.Out), redact.Known.EachWrite(streams.ErrOut)
	opts.IO = &streams
	if err := checkAdaptive(opts); err != nil {
		return err
	}
	if opts.Adaptive && opts.Reps == 0 {
		opts.Reps = defaultAdaptiveCap
	}
	s, data, plan, paired, err := planPairedRun(opts)
	if err != nil {
		return err
	}
	commands, err := agentCommands(opts, s, plan)
	if err != nil {
		return err
	}
	if err := checkBudget(opts.BudgetUSD, min(plan.Concurrency, len(plan.Trials))); err != nil {
		return err
	}
	gates, err := parseGates(opts.Gates, opts.GateRegression, s)
	if err != nil {
		return err
	}
	if err := checkOutFree(opts.Out); err != nil {
		return err
	}
	fmt.Fprintln(opts.IO.Out, plan.Summary())
	if line := branchLine(s, plan); line != "" {
		fmt.Fprintln(opts.IO.Out, line)
	}
	costDirs := []string{runsDir(opts, s)}
	if opts.Out != "" {
		costDirs = append(costDirs, filepath.Dir(filepath.Clean(opts.Out)))
	}
	costLine, perTrial := costPlanLine(s.Name, costDirs, len(plan.Trials), opts.BudgetUSD)
	if !opts.Estimated && (s.Model.Upstream != "" || opts.BudgetUSD > 0 || perTrial > 0) {
		fmt.Fprintln(opts.IO.Out, costLine)
	}
	if paired != "" {
		fmt.Fprintln(opts.IO.Out, paired)
	}
	if s.Agent.IsDocker() && opts.Temporal.Address == "" {
		// This machine's worker starts the agents' containers: an engine that does not
		// answer, or an image it lacks, would fail every trial after it started.
		dctx, cancel := context.WithTimeout(ctx, time.Minute)
		err := container.CheckImage(dctx, s.Agent.Container.Image)
		cancel()
		switch {
		case err != nil && opts.DryRun:
			// A plan may be looked at before the image is built.
			fmt.Fprintf(opts.IO.ErrOut, "warning: %s: agent.runtime docker: %v\n", opts.Spec, err)
		case err != nil:
			return badInput(fmt.Errorf("%s: agent.runtime docker: %w", opts.Spec, err))
		}
	}
	if opts.DryRun {
		if opts.NoDiscover && len(s.Servers) > 0 {
			fmt.Fprintf(opts.IO.Out, "servers not started (--no-discover): the faults on their tools are planned when the run starts them\n")
		}
		if line := modelArmLine(s); line != "" {
			fmt.Fprintln(opts.IO.Out, line)
		}
		for _, c := range commands {
			fmt.Fprintln(opts.IO.Out, c)
		}
		return nil
	}
	// The run's own worker holds every trial it runs at once: refused here, before
	// anything is made, when this machine cannot; the workers of a server must hold them
	// between them (checkWorkers, once connected).
	inFlight := min(plan.Concurrency, len(plan.Trials))
	if embeds(withNewRun(opts.Temporal)) {
		if msg := worker.CapacityProblem(inFlight); msg != "" {
			return badInput(fmt.Errorf("concurrency %d: %s; raise the limit, or lower --concurrency", inFlight, msg))
		}
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
	if flags.Address == "" {
		// This process's worker makes the sandboxes: a work root it must not use stops
		// the run before anything starts.
		if _, err := trial.ReadyWorkRoot(""); err != nil {
			return badInput(err)
		}
	}
	flags.MaxTrials = inFlight
	dial := opts.Connect
	if dial == nil {
		dial = connect
	}
	c, err := dial(cctx, flags, true, "run-"+runID)
	if err != nil {
		return err
	}
	defer c.Close()
	if !c.Embedded {
		if err := checkWorkers(cctx, c, inFlight); err != nil {
			return err
		}
	}
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
		BudgetUSD: opts.BudgetUSD, ExpectedTrialUSD: perTrial, Shape: run.Shape, Gates: opts.Gates,
		HistoryLimit: cmp.Or(opts.HistoryLimit, run.HistoryLimitFor(plan.Concurrency)), AgentTimeout: time.Duration(s.Agent.Timeout), HeartbeatTimeout: opts.HeartbeatTimeout,
	}
	memo := map[string]any{run.MemoSpec: s.Name}
	var res run.ExperimentResult
	if opts.Adaptive {
		if res, err = runAdaptive(ctx, cctx, opts, c, in, gates, memo); err != nil {
			return err
		}
	} else {
		wf, err := c.Client.ExecuteWorkflow(cctx, client.StartWorkflowOptions{ID: run.ExperimentWorkflowID(runID), TaskQueue: c.TaskQueue,
			Memo: memo}, workflows.ExperimentWorkflow, in)
		if err != nil {
			return unexpected(c, fmt.Errorf("start the run: %w", err))
		}
		if res, err = followRun(ctx, cctx, opts.IO, c, wf.GetID(), len(plan.Trials)); err != nil {
			return err
		}
	}
	printSummary(opts.IO, res)
	if note := uiAfterRun(c, opts.Temporal, runID); note != "" {
		fmt.Fprintln(opts.IO.Out, note)
	}
	if plan.Branch {
		fmt.Fprintln(opts.IO.Out, branchOutcome(res.OutDir)) // run_branch.go
	}
	if res.NeverArmed != "" {
		return unexpected(c, fmt.Errorf("the run stopped: %s: point the agent's model client at {llm_url} (its base URL setting, e.g. OPENAI_BASE_URL or ANTHROPIC_BASE_URL)", res.NeverArmed))
	}
	unscorable := res.Summary.Unscorable
	if err := noModelCallsIn(s, res.Summary.ModelTrials, res.Summary.ModelCalls); err != nil {
		return err
	}
	if err := checkGates(opts.IO, res.OutDir, gates, opts.GateRegression); err != nil {
		return err
	}
	if err := stoppedEarly(res); err != nil {
		return err
	}
	if unscorable {
		return &ExitError{Code: ExitNoScore, Err: fmt.Errorf("no trial of run %s could be scored, so it has no rate: see the warnings above and %s",
			res.RunID, filepath.Join(res.OutDir, "summary.txt"))}
	}
	return nil
}

// unexpected marks an error as an unexpected failure (exit 3), with the log's path.
func unexpected(c *conn, err error) error {
	if c != nil && c.LogPath != "" {
		err = fmt.Errorf("%w\ndetails are in %s", err, c.LogPath)
	}
	return &ExitError{Code: ExitUnexpected, Err: err}
}
