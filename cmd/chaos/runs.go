package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/crashwall/chaos/run"
)

// RunsOptions are the inputs of `chaos runs`.
type RunsOptions struct {
	IO       *IOStreams
	Temporal TemporalFlags
	Limit    int
	Results  ResultsFlags
}

// NewCmdRuns builds `chaos runs`: past runs from the results database, else Temporal's
// visibility; and `chaos runs import` (runs_import.go).
func NewCmdRuns(ios *IOStreams) *cobra.Command {
	opts := &RunsOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List past runs (from the results database when configured, else Temporal's visibility)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return runsRun(cmd.Context(), opts) },
	}
	addTemporalFlags(cmd, &opts.Temporal)
	cmd.Flags().IntVar(&opts.Limit, "limit", 20, "how many runs to list, newest first")
	addResultsFlags(cmd, &opts.Results, false)
	cmd.AddCommand(NewCmdRunsImport(ios))
	return cmd
}

func runsRun(ctx context.Context, opts *RunsOptions) error {
	if db, err := openResults(ctx, opts.Results); err != nil {
		return err
	} else if db != nil {
		defer db.Close()
		return runsFromStore(ctx, opts, db)
	}
	c, err := connect(ctx, opts.Temporal, false, "runs")
	if err != nil {
		return err
	}
	defer c.Close()
	resp, err := c.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Query:    "WorkflowType = 'ExperimentWorkflow'",
		PageSize: int32(opts.Limit),
	})
	if err != nil {
		return unexpected(c, fmt.Errorf("list runs: %w", err))
	}
	live := liveEmbeddedQueue(c, opts.Temporal)
	tw := tabwriter.NewWriter(opts.IO.Out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSPEC\tSTATUS\tSTARTED\tDURATION")
	seen := map[string]bool{}
	for _, e := range resp.Executions {
		id := strings.TrimPrefix(e.GetExecution().GetWorkflowId(), run.ExperimentWorkflowID(""))
		if seen[id] { // a run that continued as new appears once, newest first
			continue
		}
		seen[id] = true
		start := e.GetStartTime().AsTime()
		dur := "-"
		if ct := e.GetCloseTime(); ct != nil && ct.IsValid() && !ct.AsTime().IsZero() {
			dur = ct.AsTime().Sub(start).Round(time.Second).String()
		}
		status := strings.ToLower(strings.TrimPrefix(e.GetStatus().String(), "WORKFLOW_EXECUTION_STATUS_"))
		if orphaned(e.GetStatus(), e.GetTaskQueue(), live) {
			status = "stopped (its chaos run died): chaos resume " + id
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", id, memoSpec(e.GetMemo()), status, start.Local().Format("2006-01-02 15:04:05"), dur)
	}
	return tw.Flush()
}

// AbortOptions are the inputs of `chaos abort`.
type AbortOptions struct {
	IO       *IOStreams
	Temporal TemporalFlags
	RunID    string
	Reason   string
}

// NewCmdAbort builds `chaos abort RUN`.
func NewCmdAbort(ios *IOStreams) *cobra.Command {
	opts := &AbortOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "abort RUN",
		Short: "Abort a run: no new trials; running ones are stopped and torn down",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.RunID = args[0]
			return abortRun(cmd.Context(), opts)
		},
	}
	addTemporalFlags(cmd, &opts.Temporal)
	cmd.Flags().StringVar(&opts.Reason, "reason", "aborted by a person", "why, for the run's manifest")
	return cmd
}

func abortRun(ctx context.Context, opts *AbortOptions) error {
	c, err := connect(ctx, opts.Temporal, false, "abort")
	if err != nil {
		return err
	}
	defer c.Close()
	id := run.ExperimentWorkflowID(strings.TrimPrefix(opts.RunID, run.ExperimentWorkflowID("")))
	if err := c.Client.SignalWorkflow(ctx, id, "", run.SignalAbort, opts.Reason); err != nil {
		return badInput(fmt.Errorf("abort %s: %w (see chaos runs for the run ids)", opts.RunID, err))
	}
	fmt.Fprintf(opts.IO.Out, "asked run %s to abort; it stops its trials and writes its folder\n", opts.RunID)
	if d, err := c.Client.DescribeWorkflowExecution(ctx, id, ""); err == nil {
		info := d.GetWorkflowExecutionInfo()
		if orphaned(info.GetStatus(), info.GetTaskQueue(), liveEmbeddedQueue(c, opts.Temporal)) {
			fmt.Fprintf(opts.IO.Out, "no worker runs it (its chaos run died): the abort is kept, and happens when chaos resume %s starts one\n", opts.RunID)
		}
	}
	return nil
}

// liveEmbeddedQueue is the task queue of the chaos run whose embedded server c is
// connected to, "" when c is not such a server.
func liveEmbeddedQueue(c *conn, flags TemporalFlags) string {
	if c.Embedded || flags.Address != "" {
		return ""
	}
	if a, ok := runningServer(c.DataDir); ok {
		return a.Run
	}
	return ""
}

// orphaned says a run is running on a chaos run's own task queue (run.EmbeddedTaskQueue)
// while no chaos run with that queue is alive on this data directory: its process died,
// and nothing will run its trials until chaos resume does.
func orphaned(status enumspb.WorkflowExecutionStatus, queue, live string) bool {
	return status == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING && strings.HasPrefix(queue, run.EmbeddedTaskQueue("")) && queue != live
}

// memoSpec is the spec a run's workflow names in its memo, "-" for a run started without.
func memoSpec(m *commonpb.Memo) string {
	var name string
	if p := m.GetFields()[run.MemoSpec]; p != nil && converter.GetDefaultDataConverter().FromPayload(p, &name) == nil && name != "" {
		return name
	}
	return "-"
}
