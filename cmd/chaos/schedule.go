package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/workflows"
)

// Every run of a schedule skips a due time while the previous run still runs (overlap
// policy skip: a nightly run never queues behind a slow one), and a due time missed while
// the server was down is caught up only within the catch-up window.
const (
	scheduleOverlap       = enumspb.SCHEDULE_OVERLAP_POLICY_SKIP
	defaultCatchupWindow  = time.Hour
	scheduledWorkflowID   = "chaos-scheduled-"
	scheduleNameMaxLength = 60
)

var scheduleName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// ScheduleOptions are the inputs of `chaos schedule` and its subcommands.
type ScheduleOptions struct {
	IO       *IOStreams
	Temporal TemporalFlags
	Name     string

	// create
	Spec             string
	Every            time.Duration
	Cron             string
	TimeZone         string
	PairWithPrevious bool
	Webhook          string
	Reps             int
	Only             []string
	Concurrency      int
	Out              string
	CatchupWindow    time.Duration
	Paused           bool
	Note             string
	AgentCommand     []string
}

// NewCmdSchedule builds `chaos schedule create|list|describe|pause|unpause|trigger|delete`.
func NewCmdSchedule(ios *IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "schedule",
		Short: "Run a spec on a schedule and compare each run with the previous one (Temporal Schedules)",
		Long: `chaos schedule keeps recurring experiments as Temporal Schedules. Each run of a schedule
plans the spec afresh, runs it like chaos run, and is compared with the previous run of
the same schedule per cell and condition; a condition whose silent-wrong rate got
significantly worse is a regression: marked in the run's summary.txt, written to the
results database, and POSTed as JSON to the schedule's webhook.

A due time is skipped while the previous run still runs (overlap policy skip), and a due
time missed while the server was down is caught up only within the catch-up window
(default 1h). Schedules live in the Temporal server: on the embedded one they fire only
while chaos server runs.`,
	}
	cmd.AddCommand(
		newCmdScheduleCreate(ios),
		newCmdScheduleSimple(ios, "list", "List the schedules", scheduleList),
		newCmdScheduleSimple(ios, "describe NAME", "Show a schedule: spec, timing, policies, next and recent runs", scheduleDescribe),
		newCmdScheduleSimple(ios, "pause NAME", "Pause a schedule (no run starts until unpause)", schedulePause),
		newCmdScheduleSimple(ios, "unpause NAME", "Resume a paused schedule", scheduleUnpause),
		newCmdScheduleSimple(ios, "trigger NAME", "Start a run of a schedule now (after the running one, if any)", scheduleTrigger),
		newCmdScheduleSimple(ios, "delete NAME", "Delete a schedule (a run in progress finishes)", scheduleDelete),
	)
	return cmd
}

func newCmdScheduleCreate(ios *IOStreams) *cobra.Command {
	opts := &ScheduleOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "create NAME SPEC (--every DURATION | --cron EXPR) [flags] [-- AGENT COMMAND...]",
		Short: "Create a schedule that runs SPEC every DURATION or on a cron expression",
		Long: `chaos schedule create plans SPEC now (so a spec with mistakes is refused here, exit 1) and
creates the Temporal Schedule chaos-schedule-NAME. The spec's text is kept in the
schedule: later edits of the file do not change it (delete and create again).

Without --pair-with-previous every run draws its own seed (derived from its run id), so
successive runs meet the faults at other places; they are compared as independent samples
(Fisher's exact test). With it every run keeps the spec's seed, so its trials pair with
the previous run's on cell, condition, replicate and seed (McNemar's exact test), which
finds a change with fewer trials.

Run folders go to --out/<spec>/<run id> on the worker that runs them; the run id is
NAME-<start time>-<hash>.

--webhook is kept in the schedule, in Temporal's history. A chat webhook URL is its own
secret, so give it as a reference, --webhook '${SLACK_WEBHOOK}' (single quotes, so the
shell leaves it alone): the schedule keeps only the reference, and the worker that
posts expands it from its own environment. A literal URL works too, kept in plain text.`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				opts.AgentCommand = args[dash:]
				args = args[:dash]
			}
			if len(args) != 2 {
				return badInput(fmt.Errorf("give a name and one spec file (got %d arguments before --)", len(args)))
			}
			opts.Name, opts.Spec = args[0], args[1]
			return scheduleCreate(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.DurationVar(&opts.Every, "every", 0, "run every DURATION (e.g. 24h, 30m)")
	f.StringVar(&opts.Cron, "cron", "", `run on a cron expression (e.g. "0 3 * * *": at 03:00)`)
	f.StringVar(&opts.TimeZone, "time-zone", "", "time zone of --cron (IANA name; default UTC)")
	f.BoolVar(&opts.PairWithPrevious, "pair-with-previous", false, "keep the spec's seed, so each run pairs with the previous one (McNemar on shared seeds)")
	f.StringVar(&opts.Webhook, "webhook", "", "URL to POST a JSON notice to when a run regressed; give '${VAR}' to keep the URL out of Temporal's history (the worker expands it from its environment)")
	f.IntVar(&opts.Reps, "reps", 0, "replicates per condition (default: the spec's)")
	f.StringSliceVar(&opts.Only, "only", nil, "run only these conditions")
	f.IntVar(&opts.Concurrency, "concurrency", 0, "trials at once (default: the spec's limits.concurrency, else 1)")
	f.StringVar(&opts.Out, "out", "chaos-runs", "root of the run folders (made absolute now)")
	f.DurationVar(&opts.CatchupWindow, "catchup-window", defaultCatchupWindow, "run a due time missed while the server was down if it is at most this old")
	f.BoolVar(&opts.Paused, "paused", false, "create the schedule paused")
	f.StringVar(&opts.Note, "note", "", "a note kept with the schedule")
	addTemporalFlags(cmd, &opts.Temporal)
	return cmd
}

func newCmdScheduleSimple(ios *IOStreams, use, short string, f func(context.Context, *ScheduleOptions) error) *cobra.Command {
	opts := &ScheduleOptions{IO: ios}
	args := cobra.ExactArgs(1)
	if use == "list" {
		args = cobra.NoArgs
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  args,
		RunE: func(cmd *cobra.Command, a []string) error {
			if len(a) > 0 {
				opts.Name = a[0]
			}
			return f(cmd.Context(), opts)
		},
	}
	if strings.HasPrefix(use, "pause") || strings.HasPrefix(use, "unpause") {
		cmd.Flags().StringVar(&opts.Note, "note", "", "why, kept with the schedule")
	}
	addTemporalFlags(cmd, &opts.Temporal)
	return cmd
}

// scheduleMemo is what a schedule keeps about itself for list and describe, in words.
type scheduleMemo struct {
	Spec     string `json:"spec"`
	SpecPath string `json:"spec_path"`
	When     string `json:"when"`
	Trials   int    `json:"trials"`
	Paired   bool   `json:"paired"`
	Webhook  string `json:"webhook"` // a literal URL's host only: the URL may be a secret
	// WebhookRef is a webhook given as ${VAR}, as written (expanded on the worker).
	WebhookRef string `json:"webhook_ref,omitempty"`
	Out        string `json:"out"`
}

func checkScheduleName(name string) error {
	if !scheduleName.MatchString(name) || len(name) > scheduleNameMaxLength {
		return badInput(fmt.Errorf("schedule name %q: use letters, digits, '.', '_' and '-', starting with a letter or digit, at most %d characters", name, scheduleNameMaxLength))
	}
	return nil
}

func scheduleCreate(ctx context.Context, opts *ScheduleOptions) error {
	if err := checkScheduleName(opts.Name); err != nil {
		return err
	}
	if (opts.Every > 0) == (opts.Cron != "") {
		return badInput(errors.New("say when: give exactly one of --every DURATION and --cron EXPR"))
	}
	if opts.Every < 0 || (opts.Every > 0 && opts.Every < time.Second) {
		return badInput(fmt.Errorf("--every %v: give at least 1s", opts.Every))
	}
	if opts.CatchupWindow < 10*time.Second {
		return badInput(fmt.Errorf("--catchup-window %v: Temporal's minimum is 10s", opts.CatchupWindow))
	}
	hook, err := checkWebhook(opts.Webhook, nil)
	if err != nil {
		return err
	}
	// Planned now, as chaos run would, so a spec with mistakes is refused here.
	s, data, plan, err := planSpec(&RunOptions{IO: opts.IO, Spec: opts.Spec, Reps: opts.Reps, Only: opts.Only, Concurrency: opts.Concurrency, AgentCommand: opts.AgentCommand})
	if err != nil {
		return err
	}
	specPath, _ := filepath.Abs(opts.Spec)
	outRoot, err := filepath.Abs(opts.Out)
	if err != nil {
		return badInput(err)
	}

	spec := client.ScheduleSpec{TimeZoneName: opts.TimeZone}
	when := ""
	if opts.Every > 0 {
		spec.Intervals = []client.ScheduleIntervalSpec{{Every: opts.Every}}
		when = "every " + opts.Every.String()
	} else {
		spec.CronExpressions = []string{opts.Cron}
		when = "cron " + opts.Cron
		if opts.TimeZone != "" {
			when += " (" + opts.TimeZone + ")"
		}
	}
	in := workflows.ScheduledRunInput{
		Schedule: opts.Name, Spec: run.SpecRef{Name: s.Name, Path: specPath, YAML: data},
		Only: opts.Only, Reps: opts.Reps, Concurrency: opts.Concurrency, AgentCommand: strings.Join(opts.AgentCommand, " "),
		OutRoot: outRoot, PairWithPrevious: opts.PairWithPrevious, Webhook: opts.Webhook,
	}
	memo := scheduleMemo{Spec: s.Name, SpecPath: specPath, When: when, Trials: len(plan.Trials), Paired: opts.PairWithPrevious, Webhook: hook.host, WebhookRef: hook.ref, Out: outRoot}

	c, err := connect(ctx, opts.Temporal, false, "schedule")
	if err != nil {
		return err
	}
	defer c.Close()
	h, err := c.Client.ScheduleClient().Create(ctx, client.ScheduleOptions{
		ID:   workflows.ScheduleID(opts.Name),
		Spec: spec,
		Action: &client.ScheduleWorkflowAction{
			ID: scheduledWorkflowID + opts.Name, Workflow: workflows.ScheduledRunWorkflow, Args: []any{in}, TaskQueue: run.TaskQueue,
		},
		Overlap:       scheduleOverlap,
		CatchupWindow: opts.CatchupWindow,
		Paused:        opts.Paused,
		Note:          opts.Note,
		Memo:          map[string]any{"chaos": memo},
	})
	if errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		return badInput(fmt.Errorf("there is a schedule %s already (chaos schedule describe %s; delete it to create it anew)", opts.Name, opts.Name))
	}
	if err != nil {
		return badInput(fmt.Errorf("create schedule %s: %w", opts.Name, err))
	}
	fmt.Fprintf(opts.IO.Out, "schedule %s: %s, spec %s (%s)\n", opts.Name, when, s.Name, plan.Summary())
	fmt.Fprintf(opts.IO.Out, "  overlap: skip a due time while a run is in progress; catch-up window %s\n", opts.CatchupWindow)
	if opts.PairWithPrevious {
		fmt.Fprintln(opts.IO.Out, "  each run keeps the spec's seed and is compared paired with the previous run (McNemar)")
	} else {
		fmt.Fprintln(opts.IO.Out, "  each run draws its own seed and is compared unpaired with the previous run (Fisher)")
	}
	fmt.Fprintf(opts.IO.Out, "  run folders: %s/%s/<run id>\n", outRoot, s.Name)
	switch {
	case hook.ref != "":
		fmt.Fprintf(opts.IO.Out, "  webhook: %s, expanded from the worker's environment when a run regressed\n", hook.ref)
	case hook.host != "":
		fmt.Fprintf(opts.IO.Out, "  webhook: %s/...\n", hook.host)
	}
	if d, err := h.Describe(ctx); err == nil && len(d.Info.NextActionTimes) > 0 && !opts.Paused {
		fmt.Fprintf(opts.IO.Out, "  next run: %s\n", d.Info.NextActionTimes[0].Local().Format("2006-01-02 15:04:05"))
	}
	if c.Embedded {
		fmt.Fprintln(opts.IO.ErrOut, "note: no chaos server runs on this data directory; the schedule is kept and fires while chaos server runs")
	}
	if hook.warning != "" {
		fmt.Fprintln(opts.IO.ErrOut, "warning: "+hook.warning)
	}
	return nil
}

// webhookSetting is --webhook as the schedule keeps it, and what may be shown of it.
type webhookSetting struct {
	host    string // a literal URL's scheme://host
	ref     string // the webhook as written, when it holds ${VAR}s
	warning string // one line for stderr ("": none)
}

// checkWebhook checks --webhook. A webhook with ${VAR}s is kept as the reference and
// expanded by the worker from its own environment when it posts: here its value, when
// this process has the variables, must be an http(s) URL; when it has not, the worker
// (maybe on another machine) may, so that is a warning. A literal URL must be an http(s)
// URL, and is a warning too: it is kept in plain text. No message holds the URL or a
// variable's value beyond the scheme and host.
func checkWebhook(raw string, lookup func(string) (string, bool)) (webhookSetting, error) {
	if raw == "" {
		return webhookSetting{}, nil
	}
	refs := spec.SecretRefs(raw)
	if len(refs) == 0 {
		host, err := parseHTTPURL(raw)
		if err != nil {
			return webhookSetting{}, badInput(fmt.Errorf("--webhook: %w", err))
		}
		return webhookSetting{host: host, warning: "--webhook: the URL is kept in the schedule's Temporal history in plain text; pass it as '${VAR}' (set in the worker's environment) to keep it out"}, nil
	}
	h := webhookSetting{ref: raw}
	if !strings.HasPrefix(raw, "${") {
		// The URL is written around the references (a token in the path): check its shape.
		probe := raw
		for _, name := range refs {
			probe = strings.ReplaceAll(probe, "${"+name+"}", "x")
		}
		if _, err := parseHTTPURL(probe); err != nil {
			return webhookSetting{}, badInput(fmt.Errorf("--webhook %s: %w", raw, err))
		}
	}
	expanded, err := spec.ExpandSecrets(raw, lookup)
	if err != nil {
		h.warning = fmt.Sprintf("--webhook %s: %v here; the worker expands it when it posts, so it must be set in the environment of chaos worker (or chaos server)", raw, err)
		return h, nil
	}
	if _, err := parseHTTPURL(expanded); err != nil {
		return webhookSetting{}, badInput(fmt.Errorf("--webhook %s: its value here is not an http:// or https:// URL (the value is not shown: it may be a secret)", raw))
	}
	return h, nil
}

// parseHTTPURL checks an http(s) URL and returns its scheme://host, for messages.
func parseHTTPURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errors.New("want an http:// or https:// URL")
	}
	return u.Scheme + "://" + u.Host, nil
}

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

func schedulePause(ctx context.Context, opts *ScheduleOptions) error {
	return scheduleDo(ctx, opts, "paused: no run starts until chaos schedule unpause "+opts.Name, func(h client.ScheduleHandle) error {
		return h.Pause(ctx, client.SchedulePauseOptions{Note: orDefault(opts.Note, "paused with chaos schedule pause")})
	})
}

func scheduleUnpause(ctx context.Context, opts *ScheduleOptions) error {
	return scheduleDo(ctx, opts, "unpaused", func(h client.ScheduleHandle) error {
		return h.Unpause(ctx, client.ScheduleUnpauseOptions{Note: orDefault(opts.Note, "unpaused with chaos schedule unpause")})
	})
}

func scheduleTrigger(ctx context.Context, opts *ScheduleOptions) error {
	// Buffer one: a run asked for by hand starts now, or right after the run in progress.
	return scheduleDo(ctx, opts, "triggered: a run starts now, or when the run in progress ends", func(h client.ScheduleHandle) error {
		return h.Trigger(ctx, client.ScheduleTriggerOptions{Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_BUFFER_ONE})
	})
}

func scheduleDelete(ctx context.Context, opts *ScheduleOptions) error {
	return scheduleDo(ctx, opts, "deleted (a run in progress finishes; its folder and results stay)", func(h client.ScheduleHandle) error {
		return h.Delete(ctx)
	})
}

func scheduleDo(ctx context.Context, opts *ScheduleOptions, done string, f func(client.ScheduleHandle) error) error {
	c, h, err := scheduleHandle(ctx, opts)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := f(h); err != nil {
		return scheduleErr(c, opts.Name, err)
	}
	fmt.Fprintf(opts.IO.Out, "schedule %s %s\n", opts.Name, done)
	return nil
}

func scheduleHandle(ctx context.Context, opts *ScheduleOptions) (*conn, client.ScheduleHandle, error) {
	if err := checkScheduleName(opts.Name); err != nil {
		return nil, nil, err
	}
	c, err := connect(ctx, opts.Temporal, false, "schedule")
	if err != nil {
		return nil, nil, err
	}
	return c, c.Client.ScheduleClient().GetHandle(ctx, workflows.ScheduleID(opts.Name)), nil
}

func scheduleErr(c *conn, name string, err error) error {
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return badInput(fmt.Errorf("no schedule %s (chaos schedule list shows them)", name))
	}
	return unexpected(c, fmt.Errorf("schedule %s: %w", name, err))
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
