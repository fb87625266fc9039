package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/workflows"
)

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
