package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/store"
	"github.com/crashwall/chaos/trial"
	"github.com/crashwall/chaos/within"
)

// ScheduledPlanInput is the input of PlanScheduledRun: what `chaos schedule create` fixed
// for every run of the schedule, and this run's id.
type ScheduledPlanInput struct {
	Spec        run.SpecRef `json:"spec"`
	Only        []string    `json:"only,omitempty"`
	Reps        int         `json:"reps,omitempty"`
	Concurrency int         `json:"concurrency,omitempty"`
	// Seed replaces the spec's seed (0: the spec's).
	Seed int64 `json:"seed,omitempty"`
	// OutRoot is the folder the schedule's run folders go in: OutRoot/<spec>/<run id>.
	OutRoot string `json:"out_root"`
	RunID   string `json:"run_id"`
}

// ScheduledPlan is one planned run of a schedule.
type ScheduledPlan struct {
	Plan         spec.Plan     `json:"plan"`
	OutDir       string        `json:"out_dir"`
	AgentTimeout time.Duration `json:"agent_timeout,omitempty"`
	Seed         int64         `json:"seed"`
}

// PlanScheduledRun plans one run of a schedule as chaos run plans one (spec.Parse,
// faults.Generate, spec.NewPlan), from the spec text the schedule carries. A spec that no
// longer plans is bad input: a retry cannot fix it.
func (a *Activities) PlanScheduledRun(ctx context.Context, in ScheduledPlanInput) (ScheduledPlan, error) {
	s, err := trial.ParseSpec(in.Spec)
	err = fail(err)
	if err != nil {
		return ScheduledPlan{}, err
	}
	if in.Seed != 0 {
		s.Seed = in.Seed
	}
	conds, err := faults.Generate(s)
	if err != nil {
		return ScheduledPlan{}, badInput(err)
	}
	var ids []string
	for _, want := range in.Only {
		c, ok := faults.Find(conds, want)
		if !ok {
			return ScheduledPlan{}, badInput(fmt.Errorf("condition %q is not in %s any more (conditions: %s)", want, s.Name, strings.Join(faults.IDs(conds), ", ")))
		}
		ids = append(ids, c.ID)
	}
	if len(in.Only) == 0 {
		for _, c := range conds {
			ids = append(ids, c.ID)
		}
	}
	p, err := spec.NewPlan(s, ids, in.Reps, in.Concurrency)
	if err != nil {
		return ScheduledPlan{}, badInput(err)
	}
	if in.OutRoot == "" || !filepath.IsAbs(in.OutRoot) {
		return ScheduledPlan{}, badInput(fmt.Errorf("the schedule's run folder root %q is not an absolute path", in.OutRoot))
	}
	out, err := within.Join(in.OutRoot, spec.PathSafe(s.Name), in.RunID)
	if err != nil {
		return ScheduledPlan{}, badInput(fmt.Errorf("the scheduled run's folder: %w", err))
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return ScheduledPlan{}, fmt.Errorf("create the run folder: %w", err)
	}
	return ScheduledPlan{Plan: *p, OutDir: out, AgentTimeout: time.Duration(s.Agent.Timeout), Seed: s.Seed}, nil
}

// CompareInput is the input of CompareScheduledRun.
type CompareInput struct {
	Schedule string `json:"schedule"`
	RunID    string `json:"run_id"`
	OutDir   string `json:"out_dir"`
	// PreviousRunID and PreviousDir name the previous run of the schedule ("": this is the
	// first).
	PreviousRunID string `json:"previous_run_id,omitempty"`
	PreviousDir   string `json:"previous_dir,omitempty"`
	// Paired compares on shared seeds (McNemar); else the rates are compared as
	// independent samples (Fisher).
	Paired bool `json:"paired"`
}

// Comparison is a scheduled run compared with the previous run of its schedule.
type Comparison struct {
	Schedule      string           `json:"schedule"`
	PreviousRunID string           `json:"previous_run_id,omitempty"`
	Method        string           `json:"method,omitempty"`
	Rows          []report.DiffRow `json:"rows,omitempty"`
	// Regressions are the rows whose silent-wrong rate got significantly worse.
	Regressions []report.DiffRow `json:"regressions,omitempty"`
	// Note says why nothing was compared, or how the comparison fell back.
	Note string `json:"note,omitempty"`
	// ResultsDB says what could not be written to the results database ("": all was).
	ResultsDB string `json:"results_db,omitempty"`
}

// CompareScheduledRun compares a scheduled run with the previous run of its schedule
// (report.Diff, per cell and condition), writes the comparison to the run folder
// (comparison.json and a section of summary.txt that marks every regression) and to the
// results database. The previous run is read from its folder, else from the database.
func (a *Activities) CompareScheduledRun(ctx context.Context, in CompareInput) (Comparison, error) {
	cur, err := a.loadRun(ctx, in.RunID, in.OutDir)
	if err != nil {
		return Comparison{}, err
	}
	cmp := Comparison{Schedule: in.Schedule, PreviousRunID: in.PreviousRunID}
	switch {
	case in.PreviousRunID == "":
		cmp.Note = "the first run of schedule " + in.Schedule + ": nothing to compare with"
	default:
		prev, err := a.loadRun(ctx, in.PreviousRunID, in.PreviousDir)
		if err != nil {
			cmp.Note = fmt.Sprintf("not compared: the previous run %s cannot be read (%v)", in.PreviousRunID, err)
			break
		}
		rows, err := report.Diff(prev, cur, !in.Paired)
		if errors.Is(err, report.ErrNoSharedSeeds) {
			cmp.Note = "the runs share no seeds, so they are compared unpaired"
			rows, err = report.Diff(prev, cur, true)
		}
		if err != nil {
			return Comparison{}, fmt.Errorf("compare with %s: %w", in.PreviousRunID, err)
		}
		cmp.Rows = rows
		for _, r := range rows {
			cmp.Method = r.Method
			if r.Call == "worse" {
				cmp.Regressions = append(cmp.Regressions, r)
			}
		}
	}

	if b, err := json.MarshalIndent(cmp, "", "  "); err == nil {
		if err := trial.WriteFileAtomic(filepath.Join(in.OutDir, "comparison.json"), append(b, '\n')); err != nil {
			return cmp, err
		}
	}
	if a.Results != nil {
		wctx, cancel := context.WithTimeout(ctx, storeTimeout)
		err := a.Results.WriteComparison(wctx, store.Comparison{RunID: in.RunID, Schedule: in.Schedule, PreviousRunID: in.PreviousRunID, Rows: cmp.Rows})
		cancel()
		if err != nil {
			cmp.ResultsDB = fmt.Sprintf("results database %s: could not write the comparison of run %s with %s: %v", a.Results.Where(), in.RunID, in.PreviousRunID, err)
			a.logger().Warn(cmp.ResultsDB)
		}
	}
	if err := setSummarySection(in.OutDir, "compared with the previous run of schedule "+in.Schedule, comparisonText(cmp)); err != nil {
		return cmp, err
	}
	a.logger().Info("scheduled run compared", "run", in.RunID, "previous", in.PreviousRunID, "regressions", len(cmp.Regressions))
	return cmp, nil
}

// loadRun reads a run from its folder, else from the results database.
func (a *Activities) loadRun(ctx context.Context, runID, dir string) (*report.Run, error) {
	var errs []error
	if dir != "" {
		r, err := report.LoadRun(dir)
		if err == nil {
			return r, nil
		}
		errs = append(errs, err)
	}
	if a.Results != nil {
		r, _, err := a.Results.LoadRun(ctx, runID)
		if err == nil {
			return r, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("run %s has no folder here and there is no results database", runID)
	}
	return nil, errors.Join(errs...)
}

// comparisonText is the summary.txt section of a comparison: one line per condition, the
// regressions marked.
func comparisonText(c Comparison) string {
	var b bytes.Buffer
	if c.Note != "" {
		fmt.Fprintln(&b, c.Note)
	}
	if len(c.Rows) == 0 {
		return b.String()
	}
	fmt.Fprintf(&b, "previous run %s; %s, alpha %.2f; silent wrong / scored trials\n", c.PreviousRunID, c.Method, report.Alpha)
	if len(c.Regressions) > 0 {
		fmt.Fprintf(&b, "REGRESSION: %d condition(s) got significantly worse\n", len(c.Regressions))
	} else {
		fmt.Fprintln(&b, "no regression")
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "cell\tcondition\tprevious\tthis run\tp\tcall")
	for _, r := range c.Rows {
		mark := r.Call
		if r.Call == "worse" {
			mark = "WORSE (regression)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Cell, r.Condition, r.A, r.B, report.FormatP(r.P), mark)
	}
	tw.Flush()
	if c.ResultsDB != "" {
		fmt.Fprintln(&b, c.ResultsDB)
	}
	return b.String()
}

// RegressionNotice is the JSON a schedule's webhook receives when a run regressed. Text
// is the news in one paragraph, so chat webhooks that show a "text" field (Slack's
// incoming webhooks among them) need no adapter.
type RegressionNotice struct {
	Text          string           `json:"text"`
	Schedule      string           `json:"schedule"`
	Spec          string           `json:"spec"`
	RunID         string           `json:"run_id"`
	PreviousRunID string           `json:"previous_run_id"`
	RunDir        string           `json:"run_dir"`
	Method        string           `json:"method"`
	Regressions   []report.DiffRow `json:"regressions"`
}

// NewRegressionNotice describes a regressed run for the webhook.
func NewRegressionNotice(schedule, specName, runID, runDir string, c Comparison) RegressionNotice {
	var parts []string
	for _, r := range c.Regressions {
		parts = append(parts, fmt.Sprintf("%s %s: %s -> %s (p %s)", r.Cell, r.Condition, r.A, r.B, report.FormatP(r.P)))
	}
	text := fmt.Sprintf("chaos: schedule %s (spec %s) regressed in run %s against %s; silent wrong got worse in %d condition(s): %s",
		schedule, specName, runID, c.PreviousRunID, len(c.Regressions), strings.Join(parts, "; "))
	return RegressionNotice{Text: text, Schedule: schedule, Spec: specName, RunID: runID, PreviousRunID: c.PreviousRunID,
		RunDir: runDir, Method: c.Method, Regressions: c.Regressions}
}

// WebhookInput is the input of PostWebhook.
type WebhookInput struct {
	// URL is the webhook as the schedule keeps it: a reference such as ${SLACK_WEBHOOK},
	// expanded from this worker's environment when it posts (so the URL, often its own
	// secret, is never in Temporal's history), or a literal URL.
	URL    string           `json:"url"`
	Notice RegressionNotice `json:"notice"`
}

// webhookTimeout bounds one POST; the workflow's retry policy tries again.
const webhookTimeout = 15 * time.Second

// webhookTarget is the URL to post to: raw with its ${VAR}s expanded from lookup
// (os.LookupEnv when nil), checked to be an http(s) URL, and the scheme://host that
// messages may name. A chat webhook URL is its own secret, so no error holds the URL or
// a variable's value: they name the variable, or the host.
func webhookTarget(raw string, lookup func(string) (string, bool)) (target, where string, err error) {
	refs := spec.SecretRefs(raw)
	target, err = spec.ExpandSecrets(raw, lookup)
	if err != nil {
		return "", "", fmt.Errorf("the schedule's webhook is %s: %w on this worker; set it in the environment of chaos worker (or chaos server) and restart it", refList(refs), err)
	}
	u, perr := url.Parse(target)
	if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		if len(refs) > 0 {
			return "", "", fmt.Errorf("the schedule's webhook is %s, and on this worker that is not an http:// or https:// URL (the value is not shown: it may be a secret)", refList(refs))
		}
		return "", "", errors.New("the schedule's webhook is not an http:// or https:// URL")
	}
	return target, u.Scheme + "://" + u.Host, nil
}

// refList is the ${VAR}s of a webhook as written, for messages.
func refList(names []string) string {
	refs := make([]string, len(names))
	for i, n := range names {
		refs[i] = "${" + n + "}"
	}
	return strings.Join(refs, ", ")
}

// PostWebhook POSTs the notice as JSON to the schedule's webhook, its ${VAR}s expanded
// from this worker's environment now. Any 2xx answer is success; anything else is an
// error that the workflow retries. A variable that is not set here, or a value that is
// not an http(s) URL, is bad input: a retry cannot fix it.
func (a *Activities) PostWebhook(ctx context.Context, in WebhookInput) error {
	body, err := json.Marshal(in.Notice)
	if err != nil {
		return badInput(err)
	}
	target, where, err := webhookTarget(in.URL, nil)
	if err != nil {
		return badInput(err)
	}
	ctx, cancel := context.WithTimeout(ctx, webhookTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		// Its error would quote the URL.
		return badInput(fmt.Errorf("the webhook at %s cannot be requested", where))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "chaos-schedule")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		// A *url.Error quotes the whole URL: keep only what went wrong.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return fmt.Errorf("webhook at %s: %w", where, err)
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("webhook at %s answered %s: %s", where, resp.Status, scrubURL(strings.TrimSpace(string(snippet)), target))
	}
	a.logger().Info("regression posted to the webhook", "run", in.Notice.RunID, "webhook", where, "status", resp.StatusCode)
	return nil
}

// scrubURL removes from text (a webhook's answer, quoted in errors and the run's note) the
// webhook's URL and the parts of it past the host, which may be its secret: a receiver
// that echoes the request it refused must not put the secret in the history. Path
// segments and query values of six characters or more are removed wherever they stand.
func scrubURL(text, target string) string {
	text = strings.ReplaceAll(text, target, "<webhook URL>")
	u, err := url.Parse(target)
	if err != nil {
		return text
	}
	var parts []string
	if p := strings.Trim(u.EscapedPath(), "/"); p != "" {
		parts = append(parts, p, strings.Trim(u.Path, "/"))
		for _, seg := range strings.Split(p, "/") {
			parts = append(parts, seg)
		}
	}
	if u.RawQuery != "" {
		parts = append(parts, u.RawQuery)
		for _, vs := range u.Query() {
			parts = append(parts, vs...)
		}
	}
	// Longest first, so that a whole path goes before its segments.
	slices.SortFunc(parts, func(a, b string) int { return len(b) - len(a) })
	for _, p := range parts {
		if len(p) >= 6 {
			text = strings.ReplaceAll(text, p, "<hidden>")
		}
	}
	return text
}
