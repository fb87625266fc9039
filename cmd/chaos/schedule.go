package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"
	enumspb "go.temporal.io/api/enums/v1"
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
