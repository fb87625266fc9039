package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/within"
	"github.com/crashwall/chaos/worker"
)

// ResumeOptions are the inputs of `chaos resume`.
type ResumeOptions struct {
	IO       *IOStreams
	Temporal TemporalFlags
	RunID    string
}

// NewCmdResume builds `chaos resume RUN`.
func NewCmdResume(ios *IOStreams) *cobra.Command {
	opts := &ResumeOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "resume RUN",
		Short: "Carry on a run whose chaos run died: a worker for its trials, and its progress to its end",
		Long: `chaos resume picks up a run that chaos run started with its embedded server and worker
and that died (killed, or the machine restarted): it starts the server on the data directory
(or uses the chaos server running there), runs a worker for that run's trials only, and
follows the run to its end as chaos run does. Trials that were running when it died are run
again from a fresh folder; finished ones are kept. chaos runs lists such runs.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.RunID = strings.TrimPrefix(args[0], run.ExperimentWorkflowID(""))
			if msg := within.Name(opts.RunID); msg != "" {
				return badInput(fmt.Errorf("%q is not a run id: it %s (chaos runs lists the run ids on this data directory)", args[0], msg))
			}
			return resumeRun(cmd.Context(), opts)
		},
	}
	addTemporalFlags(cmd, &opts.Temporal)
	return cmd
}

func resumeRun(ctx context.Context, opts *ResumeOptions) error {
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	flags := opts.Temporal
	flags.TaskQueue, flags.WorkerLater = run.EmbeddedTaskQueue(opts.RunID), true
	c, err := connect(cctx, flags, true, "resume-"+opts.RunID)
	if err != nil {
		return err
	}
	defer c.Close()
	id := run.ExperimentWorkflowID(opts.RunID)
	d, err := c.Client.DescribeWorkflowExecution(cctx, id, "")
	if err != nil {
		return badInput(fmt.Errorf("resume %s: %w (see chaos runs for the run ids on this data directory)", opts.RunID, err))
	}
	info := d.GetWorkflowExecutionInfo()
	if info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return badInput(fmt.Errorf("run %s is not running (%s): nothing to resume", opts.RunID, strings.ToLower(strings.TrimPrefix(info.GetStatus().String(), "WORKFLOW_EXECUTION_STATUS_"))))
	}
	if err := checkShape(cctx, c.Client, namespace(flags), opts.RunID, id, info.GetExecution().GetRunId()); err != nil {
		return err
	}
	// A worker for this run's queue here, as wide as the run (its plan's concurrency).
	trials, err := runConcurrency(cctx, c, id)
	if err != nil {
		return unexpected(c, fmt.Errorf("read the concurrency of run %s: %w", opts.RunID, err))
	}
	if msg := worker.CapacityProblem(trials); msg != "" {
		return badInput(fmt.Errorf("resume %s, a run of %d trials at once: %s; raise the limit", opts.RunID, trials, msg))
	}
	if err := c.startWorker(info.GetTaskQueue(), trials); err != nil {
		return unexpected(c, fmt.Errorf("start a worker for run %s: %w", opts.RunID, err))
	}
	total, running := 0, 0
	if v, err := c.Client.QueryWorkflow(cctx, id, "", run.QueryProgress); err == nil {
		var p run.Progress
		if v.Get(&p) == nil {
			total, running = p.Total, p.Running
		}
	}
	fmt.Fprintf(opts.IO.Out, "resuming run %s\n", opts.RunID)
	if start, err := runStart(cctx, c, id); err == nil {
		if note := resumeWait(running, start); note != "" {
			fmt.Fprintln(opts.IO.Out, note)
		}
	}
	res, err := followRun(ctx, cctx, opts.IO, c, id, total)
	if err != nil {
		return err
	}
	printSummary(opts.IO, res)
	return stoppedEarly(res)
}

// runConcurrency is how many trials at once the run id runs: its plan's concurrency, from
// the input of its current workflow run.
func runConcurrency(ctx context.Context, c *conn, id string) (int, error) {
	in, err := runStart(ctx, c, id)
	return max(in.Plan.Concurrency, 1), err
}

// runStartInput is what chaos resume reads of a run's start: its concurrency and the
// timeouts that say how long its lost trials wait before they run again.
type runStartInput struct {
	Plan struct {
		Concurrency int `json:"concurrency"`
	} `json:"plan"`
	AgentTimeout     time.Duration `json:"agent_timeout"`
	HeartbeatTimeout time.Duration `json:"heartbeat_timeout"`
}

// runStart reads the input of the run's workflow from its first history event.
func runStart(ctx context.Context, c *conn, id string) (runStartInput, error) {
	var in runStartInput
	it := c.Client.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	if !it.HasNext() {
		return in, fmt.Errorf("workflow %s has no history", id)
	}
	ev, err := it.Next()
	if err != nil {
		return in, err
	}
	attrs := ev.GetWorkflowExecutionStartedEventAttributes()
	if attrs == nil {
		return in, fmt.Errorf("the first event of workflow %s is not its start", id)
	}
	payloads := attrs.GetInput().GetPayloads()
	if len(payloads) == 0 {
		return in, fmt.Errorf("workflow %s was started with no input", id)
	}
	if err := json.Unmarshal(payloads[0].GetData(), &in); err != nil {
		return in, fmt.Errorf("read the input of workflow %s: %w", id, err)
	}
	return in, nil
}

// resumeWait is what chaos resume says while the trials that were running when the run
// stopped wait out their heartbeat timeout (their old worker's end is seen no sooner):
// without it the console says nothing for a minute or more.
func resumeWait(running int, in runStartInput) string {
	hb := in.HeartbeatTimeout
	if hb <= 0 {
		agent := in.AgentTimeout
		if agent <= 0 {
			agent = run.DefaultAgentTimeout
		}
		hb = run.HeartbeatTimeoutFor(agent)
	}
	lead := "a trial that was running when the run stopped"
	if running > 0 {
		lead = fmt.Sprintf("the %d trial(s) running when the run stopped (as last reported)", running)
	}
	return fmt.Sprintf("%s runs again from a fresh folder once Temporal sees its old worker gone, within %s (the trials' heartbeat timeout); the others start now",
		lead, hb.Round(time.Second))
}
