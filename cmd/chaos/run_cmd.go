package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/crashwall/chaos/spec"
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
	// NoDiscover plans without starting or reaching the spec's servers (chaos mcp's
	// plan_run): nothing runs before the person approves.
	NoDiscover bool
	// PairWith is a run folder, or "latest", whose seeds the plan reuses.
	PairWith     string
	AgentCommand []string
	// Branch: fault trials start from the clean trial's twin before the last unit.
	Branch bool
	// Profile takes the place of the spec's agent.profile (how the closing message is read).
	Profile  string
	Temporal TemporalFlags
	// HistoryLimit is passed to the workflow (tests lower it to exercise continue-as-new).
	HistoryLimit int
	// BudgetUSD stops starting trials once the run could spend more (cost.go).
	BudgetUSD float64
	// Estimated says the caller has printed the plan's cost estimate (chaos skill test,
	// from its clean run): the run prints no second one.
	Estimated bool
	// HeartbeatTimeout is passed to the workflow (0: derived from the agent's timeout).
	HeartbeatTimeout time.Duration
	// Gates are --gate's bars and GateRegression --gate-regression's baseline run folder
	// (run_gate.go).
	Gates          []string
	GateRegression string
	// Adaptive runs the trials in rounds, each condition until its question is answered
	// (run_adaptive.go); Width is the interval's width it stops at (0: what --reps 10 gives).
	Adaptive bool
	Width    float64
	// Now and NewRunID are replaced in tests.
	Now      func() time.Time
	NewRunID func(time.Time) string
	// Connect reaches Temporal, or starts it here, with this process's worker when asked
	// (nil: connect). Tests replace it to run the command past its plan in-process.
	Connect func(ctx context.Context, flags TemporalFlags, withWorker bool, logName string) (*conn, error)
}

// NewCmdRun builds `chaos run SPEC [-- AGENT COMMAND...]`.
func NewCmdRun(ios *IOStreams, runF func(context.Context, *RunOptions) error) *cobra.Command {
	opts := &RunOptions{IO: ios, Now: nowFunc, NewRunID: newRunID, Connect: connect}
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
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "print the plan and exit without starting a trial (the spec's servers are started to list their tools, unless --no-discover)")
	cmd.Flags().BoolVar(&opts.NoDiscover, "no-discover", false, "with --dry-run: plan without starting or reaching the spec's servers (the faults on their tools are planned when the run starts)")
	cmd.Flags().DurationVar(&opts.HeartbeatTimeout, "heartbeat-timeout", 0, "how long a trial's worker may go unheard before the trial runs again (default: a fifth of agent.timeout, 1m to 5m)")
	_ = cmd.Flags().MarkHidden("heartbeat-timeout") // for tests that starve a worker
	cmd.Flags().IntVar(&opts.HistoryLimit, "history-limit", 0, "trials a run of the experiment's workflow hands to its batches before it continues as new (default 20,000)")
	_ = cmd.Flags().MarkHidden("history-limit") // for tests of continue-as-new at a small scale
	cmd.Flags().StringVar(&opts.Profile, "profile", "", "how the agent's closing message is read, in place of the spec's agent.profile: "+strings.Join(spec.Profiles, ", "))
	cmd.Flags().Float64Var(&opts.BudgetUSD, "budget", 0, "the most the run may spend on model calls, in USD: no trial starts once spent plus expected would exceed it")
	cmd.Flags().BoolVar(&opts.Branch, "branch", false, "run each cell's clean trial first; its fault trials start from its twin state just before its first write on the task's last unit (docs/shim.md)")
	cmd.Flags().BoolVar(&opts.Adaptive, "adaptive", false, "run the trials in rounds, each condition until its 80% confidence sequence is --width wide, its gates are decided, or --reps (default 40) is reached (docs/verdicts.md#adaptive-runs)")
	cmd.Flags().Float64Var(&opts.Width, "width", 0, "with --adaptive: the interval width a condition stops at, as a share (default: the widest a fixed 10 replicates give, 0.38)")
	cmd.Flags().StringArrayVar(&opts.Gates, "gate", nil, "fail the run (exit 5) where the evidence says a rate breaks this bar, such as 'silent_wrong<=5%' (repeatable; any verdict or declared outcome)")
	cmd.Flags().StringVar(&opts.GateRegression, "gate-regression", "", "fail the run (exit 5) where it is worse than this paired baseline run folder (McNemar, alpha 0.05)")
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
