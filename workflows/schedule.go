package workflows

import (
	"encoding/hex"
	"hash/fnv"
	"strings"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/crashwall/chaos/activities"
	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
)

// ScheduleID is the Temporal Schedule id of `chaos schedule create NAME`.
func ScheduleID(name string) string { return "chaos-schedule-" + name }

// ScheduleName is the NAME of a Temporal Schedule id made by ScheduleID ("" for another).
func ScheduleName(id string) string {
	name, ok := strings.CutPrefix(id, "chaos-schedule-")
	if !ok {
		return ""
	}
	return name
}

// ScheduledRunInput is what a schedule starts every run with; it is fixed when the
// schedule is created, so a run plans itself (PlanScheduledRun) instead of carrying a plan.
type ScheduledRunInput struct {
	Schedule     string      `json:"schedule"`
	Spec         run.SpecRef `json:"spec"`
	Only         []string    `json:"only,omitempty"`
	Reps         int         `json:"reps,omitempty"`
	Concurrency  int         `json:"concurrency,omitempty"`
	AgentCommand string      `json:"agent_command,omitempty"`
	// OutRoot is where run folders go, on the worker that runs the experiment:
	// OutRoot/<spec>/<run id>.
	OutRoot string `json:"out_root"`
	// PairWithPrevious keeps the spec's seed in every run, so each run's trials pair with
	// the previous run's (McNemar on shared seeds). Without it every run draws a fresh
	// seed, so successive runs see other fault positions, and they are compared as
	// independent samples (Fisher).
	PairWithPrevious bool `json:"pair_with_previous,omitempty"`
	// Webhook, when set, receives a JSON RegressionNotice when a run regressed. It is kept
	// as given, in the schedule and every run's history: a reference such as
	// ${SLACK_WEBHOOK}, which PostWebhook expands from the worker's environment, or a
	// literal URL (in plain text there).
	Webhook string `json:"webhook,omitempty"`
}

// ScheduledRunResult is what a scheduled run ends with. The schedule hands it to the next
// run as its last completion result: that is how a run knows the previous one.
type ScheduledRunResult struct {
	RunID         string           `json:"run_id"`
	OutDir        string           `json:"out_dir"`
	Seed          int64            `json:"seed"`
	Summary       run.Summary      `json:"summary"`
	PreviousRunID string           `json:"previous_run_id,omitempty"`
	Regressions   []report.DiffRow `json:"regressions,omitempty"`
	Note          string           `json:"note,omitempty"`
}

// ScheduledRunID is the run id of a scheduled run: the schedule's name, when the run
// started and a short hash of its workflow run id, so two runs of a schedule never share
// one and it sorts by time.
func ScheduledRunID(schedule string, start time.Time, workflowRunID string) string {
	h := fnv.New32a()
	h.Write([]byte(workflowRunID))
	return schedule + "-" + start.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(h.Sum(nil))[:6]
}

// freshSeed is a run's own seed, derived from its run id (never 0, which means "the spec's").
func freshSeed(runID string) int64 {
	h := fnv.New64a()
	h.Write([]byte(runID))
	return int64(h.Sum64()&(1<<62-1)) | 1
}

// ScheduledRunWorkflow is the action of a chaos schedule: one run of the spec, compared
// with the previous run of the same schedule.
//
//	PlanScheduledRun ─> ExperimentWorkflow (child, run id from the start time)
//	  ─> CompareScheduledRun (report.Diff with the previous run; regressions into summary.txt and the results database)
//	  ─> PostWebhook (when a condition got significantly worse and a webhook is set)
//
// The previous run is the schedule's last completion result: the ScheduledRunResult of
// the last run that completed.
func ScheduledRunWorkflow(ctx workflow.Context, in ScheduledRunInput) (ScheduledRunResult, error) {
	logger := workflow.GetLogger(ctx)
	info := workflow.GetInfo(ctx)
	started := info.WorkflowStartTime
	runID := ScheduledRunID(in.Schedule, started, info.WorkflowExecution.RunID)

	var prev ScheduledRunResult
	if workflow.HasLastCompletionResult(ctx) {
		if err := workflow.GetLastCompletionResult(ctx, &prev); err != nil {
			logger.Warn("the previous run's result cannot be read; this run is not compared", "error", err)
			prev = ScheduledRunResult{}
		}
	}

	var seed int64 // 0: the spec's
	if !in.PairWithPrevious {
		seed = freshSeed(runID)
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 5, NonRetryableErrorTypes: []string{activities.ErrBadInput}},
	})
	var plan activities.ScheduledPlan
	if err := workflow.ExecuteActivity(actx, a.PlanScheduledRun, activities.ScheduledPlanInput{
		Spec: in.Spec, Only: in.Only, Reps: in.Reps, Concurrency: in.Concurrency, Seed: seed, OutRoot: in.OutRoot, RunID: runID,
	}).Get(ctx, &plan); err != nil {
		return ScheduledRunResult{}, err
	}

	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            run.ExperimentWorkflowID(runID),
		WorkflowIDReusePolicy: enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		// Cancelling or terminating the scheduled run (or deleting its schedule with it)
		// aborts the experiment, which tears its trials down.
		ParentClosePolicy: enums.PARENT_CLOSE_POLICY_REQUEST_CANCEL,
		Memo:              map[string]any{run.MemoSpec: in.Spec.Name},
	})
	var res run.ExperimentResult
	if err := workflow.ExecuteChildWorkflow(cctx, ExperimentWorkflow, run.ExperimentInput{
		RunID: runID, Spec: in.Spec, Plan: plan.Plan, OutDir: plan.OutDir, AgentCommand: in.AgentCommand,
		Started: started, AgentTimeout: plan.AgentTimeout, Shape: run.Shape,
	}).Get(ctx, &res); err != nil {
		return ScheduledRunResult{}, err
	}
	result := ScheduledRunResult{RunID: runID, OutDir: plan.OutDir, Seed: plan.Seed, Summary: res.Summary, PreviousRunID: prev.RunID}

	var cmp activities.Comparison
	if err := workflow.ExecuteActivity(actx, a.CompareScheduledRun, activities.CompareInput{
		Schedule: in.Schedule, RunID: runID, OutDir: plan.OutDir,
		PreviousRunID: prev.RunID, PreviousDir: prev.OutDir, Paired: in.PairWithPrevious,
	}).Get(ctx, &cmp); err != nil {
		// The run is done and its folder written; a comparison that cannot be made is
		// reported, not a reason to fail the run (the next one compares with this one).
		logger.Warn("the run was not compared with the previous one", "error", err)
		result.Note = "not compared with the previous run: " + err.Error()
		return result, nil
	}
	result.Regressions, result.Note = cmp.Regressions, cmp.Note

	if len(cmp.Regressions) > 0 && in.Webhook != "" {
		wctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			StartToCloseTimeout: time.Minute,
			RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 5, InitialInterval: 2 * time.Second, NonRetryableErrorTypes: []string{activities.ErrBadInput}},
		})
		notice := activities.NewRegressionNotice(in.Schedule, in.Spec.Name, runID, plan.OutDir, cmp)
		if err := workflow.ExecuteActivity(wctx, a.PostWebhook, activities.WebhookInput{URL: in.Webhook, Notice: notice}).Get(ctx, nil); err != nil {
			logger.Warn("the regression could not be posted to the webhook", "error", err)
			result.Note = strings.TrimSpace(result.Note + "; the webhook was not reached: " + err.Error())
		}
	}
	return result, nil
}
