package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/crashwall/chaos/workflows"
)

func scheduleList(ctx context.Context, opts *ScheduleOptions) error {
	c, err := connect(ctx, opts.Temporal, false, "schedule")
	if err != nil {
		return err
	}
	defer c.Close()
	it, err := c.Client.ScheduleClient().List(ctx, client.ScheduleListOptions{})
	if err != nil {
		return unexpected(c, fmt.Errorf("list schedules: %w", err))
	}
	tw := tabwriter.NewWriter(opts.IO.Out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSPEC\tWHEN\tSTATE\tNEXT RUN")
	n := 0
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return unexpected(c, fmt.Errorf("list schedules: %w", err))
		}
		name := workflows.ScheduleName(e.ID)
		if name == "" {
			continue
		}
		m := readMemo(e.Memo)
		state := "active"
		if e.Paused {
			state = "paused"
		}
		next := "-"
		if len(e.NextActionTimes) > 0 && !e.Paused {
			next = e.NextActionTimes[0].Local().Format("2006-01-02 15:04:05")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", name, m.Spec, m.When, state, next)
		n++
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if n == 0 {
		fmt.Fprintln(opts.IO.Out, "(no schedules: chaos schedule create NAME SPEC --every 24h)")
	}
	return nil
}

func scheduleDescribe(ctx context.Context, opts *ScheduleOptions) error {
	c, h, err := scheduleHandle(ctx, opts)
	if err != nil {
		return err
	}
	defer c.Close()
	d, err := h.Describe(ctx)
	if err != nil {
		return scheduleErr(c, opts.Name, err)
	}
	describeSchedule(opts.IO.Out, opts.Name, readMemo(d.Memo), d)
	if len(d.Info.RecentActions) > 0 {
		out := opts.IO.Out
		fmt.Fprintln(out, "\nrecent runs (newest last):")
		tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  STARTED\tSTATUS\tRUN\tVS PREVIOUS")
		for _, a := range d.Info.RecentActions {
			fmt.Fprintln(tw, "  "+describeAction(ctx, c.Client, a))
		}
		tw.Flush()
	}
	return nil
}

// describeSchedule prints what describe shows of the schedule itself: its spec, timing,
// state (with the note of its last pause or unpause), comparison, and next run times.
func describeSchedule(out io.Writer, name string, m scheduleMemo, d *client.ScheduleDescription) {
	fmt.Fprintf(out, "schedule   %s (Temporal schedule %s)\n", name, workflows.ScheduleID(name))
	fmt.Fprintf(out, "spec       %s (%s), %d trials per run\n", m.Spec, m.SpecPath, m.Trials)
	fmt.Fprintf(out, "when       %s\n", m.When)
	paused := d.Schedule.State != nil && d.Schedule.State.Paused
	state := "active"
	if paused {
		state = "paused"
	}
	if d.Schedule.State != nil && d.Schedule.State.Note != "" {
		state += " (" + d.Schedule.State.Note + ")"
	}
	fmt.Fprintf(out, "state      %s\n", state)
	if p := d.Schedule.Policy; p != nil {
		fmt.Fprintf(out, "overlap    %s; catch-up window %s\n", overlapWords(p.Overlap), p.CatchupWindow)
	}
	if m.Paired {
		fmt.Fprintln(out, "compare    paired with the previous run (the spec's seed every run; McNemar)")
	} else {
		fmt.Fprintln(out, "compare    unpaired with the previous run (a fresh seed every run; Fisher)")
	}
	switch {
	case m.WebhookRef != "":
		fmt.Fprintf(out, "webhook    %s (expanded from the worker's environment)\n", m.WebhookRef)
	case m.Webhook != "":
		fmt.Fprintf(out, "webhook    %s/...\n", m.Webhook)
	}
	fmt.Fprintf(out, "folders    %s/%s/<run id>\n", m.Out, m.Spec)
	fmt.Fprintf(out, "runs       %d started, %d skipped while one ran, %d missed the catch-up window\n",
		d.Info.NumActions, d.Info.NumActionsSkippedOverlap, d.Info.NumActionsMissedCatchupWindow)
	// A note (every pause and unpause leaves one) is not a state: only pausing stops them.
	for i, t := range d.Info.NextActionTimes {
		if i == 3 || paused {
			break
		}
		fmt.Fprintf(out, "next       %s\n", t.Local().Format("2006-01-02 15:04:05"))
	}
}

// describeAction is one row of describe's recent runs: the scheduled workflow's status
// and, once it has completed, its run id and how it compared with the previous run.
func describeAction(ctx context.Context, c client.Client, a client.ScheduleActionResult) string {
	started := a.ActualTime.Local().Format("2006-01-02 15:04:05")
	if a.StartWorkflowResult == nil {
		return started + "\t-\t-\t-"
	}
	wf := a.StartWorkflowResult
	desc, err := c.DescribeWorkflowExecution(ctx, wf.WorkflowID, wf.FirstExecutionRunID)
	if err != nil {
		return fmt.Sprintf("%s\tunknown\t%s\t-", started, wf.WorkflowID)
	}
	status := desc.GetWorkflowExecutionInfo().GetStatus()
	words := strings.ToLower(strings.TrimPrefix(status.String(), "WORKFLOW_EXECUTION_STATUS_"))
	if status != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		return fmt.Sprintf("%s\t%s\t%s\t-", started, words, wf.WorkflowID)
	}
	var res workflows.ScheduledRunResult
	if err := c.GetWorkflow(ctx, wf.WorkflowID, wf.FirstExecutionRunID).Get(ctx, &res); err != nil {
		return fmt.Sprintf("%s\t%s\t%s\t-", started, words, wf.WorkflowID)
	}
	vs := "first run"
	switch {
	case len(res.Regressions) > 0:
		vs = fmt.Sprintf("REGRESSION in %d condition(s) vs %s", len(res.Regressions), res.PreviousRunID)
	case res.PreviousRunID != "":
		vs = "no regression vs " + res.PreviousRunID
	}
	return fmt.Sprintf("%s\t%s\t%s\t%s", started, words, res.RunID, vs)
}

func overlapWords(p enumspb.ScheduleOverlapPolicy) string {
	switch p {
	case enumspb.SCHEDULE_OVERLAP_POLICY_SKIP, enumspb.SCHEDULE_OVERLAP_POLICY_UNSPECIFIED:
		return "skip (a due time is skipped while a run is in progress)"
	}
	return strings.ToLower(strings.TrimPrefix(p.String(), "SCHEDULE_OVERLAP_POLICY_"))
}

func readMemo(m *commonpb.Memo) scheduleMemo {
	var out scheduleMemo
	if p := m.GetFields()["chaos"]; p != nil {
		_ = converter.GetDefaultDataConverter().FromPayload(p, &out)
	}
	return out
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
