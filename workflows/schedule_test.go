package workflows

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/crashwall/chaos/activities"
	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
)

// scheduleMocks records what the scheduled run asked of its activities and child.
type scheduleMocks struct {
	plan    activities.ScheduledPlanInput
	child   run.ExperimentInput
	compare activities.CompareInput
	posted  []activities.WebhookInput
}

func newScheduleEnv(t *testing.T, regressions []report.DiffRow) (*testsuite.TestWorkflowEnvironment, *scheduleMocks) {
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(ExperimentWorkflow)
	env.RegisterActivity(a)
	m := &scheduleMocks{}
	env.OnActivity(a.PlanScheduledRun, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.ScheduledPlanInput) (activities.ScheduledPlan, error) {
		m.plan = in
		return activities.ScheduledPlan{Plan: planOf(2, 1), OutDir: "/runs/spec/" + in.RunID, Seed: max(in.Seed, 7)}, nil
	})
	env.OnWorkflow(ExperimentWorkflow, mock.Anything, mock.Anything).Return(func(_ workflow.Context, in run.ExperimentInput) (run.ExperimentResult, error) {
		m.child = in
		return run.ExperimentResult{RunID: in.RunID, OutDir: in.OutDir, Summary: run.Summary{Trials: 2}}, nil
	})
	env.OnActivity(a.CompareScheduledRun, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.CompareInput) (activities.Comparison, error) {
		m.compare = in
		return activities.Comparison{PreviousRunID: in.PreviousRunID, Regressions: regressions, Rows: regressions}, nil
	})
	env.OnActivity(a.PostWebhook, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.WebhookInput) error {
		m.posted = append(m.posted, in)
		return nil
	}).Maybe()
	return env, m
}

func TestScheduledRunComparesWithThePreviousRunAndPostsARegression(t *testing.T) {
	worse := []report.DiffRow{{Cell: "main", Condition: "phantom_success@save", A: report.NewRate(0, 6), B: report.NewRate(6, 6), Worse: 6, P: 0.03, Call: "worse", Method: "McNemar"}}
	env, m := newScheduleEnv(t, worse)
	env.SetLastCompletionResult(ScheduledRunResult{RunID: "nightly-20260101-030000-abcdef", OutDir: "/runs/spec/nightly-20260101-030000-abcdef"})
	env.ExecuteWorkflow(ScheduledRunWorkflow, ScheduledRunInput{Schedule: "nightly", Spec: run.SpecRef{Name: "spec"}, PairWithPrevious: true, Webhook: "http://127.0.0.1:1/hook", OutRoot: "/runs"})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res ScheduledRunResult
	require.NoError(t, env.GetWorkflowResult(&res))

	require.True(t, strings.HasPrefix(res.RunID, "nightly-"), res.RunID)
	require.Equal(t, res.RunID, m.plan.RunID)
	require.Equal(t, run.ExperimentWorkflowID(res.RunID), run.ExperimentWorkflowID(m.child.RunID))
	require.Zero(t, m.plan.Seed, "paired with the previous run: the spec's seed")
	require.Equal(t, "nightly-20260101-030000-abcdef", m.compare.PreviousRunID)
	require.Equal(t, "/runs/spec/nightly-20260101-030000-abcdef", m.compare.PreviousDir)
	require.True(t, m.compare.Paired)
	require.Equal(t, "nightly-20260101-030000-abcdef", res.PreviousRunID)
	require.Len(t, res.Regressions, 1)
	require.Len(t, m.posted, 1)
	require.Equal(t, res.RunID, m.posted[0].Notice.RunID)
	require.Contains(t, m.posted[0].Notice.Text, "regressed")
}

func TestScheduledRunFirstRunDrawsItsOwnSeedAndPostsNothing(t *testing.T) {
	env, m := newScheduleEnv(t, nil)
	env.ExecuteWorkflow(ScheduledRunWorkflow, ScheduledRunInput{Schedule: "nightly", Spec: run.SpecRef{Name: "spec"}, Webhook: "http://127.0.0.1:1/hook", OutRoot: "/runs"})
	require.NoError(t, env.GetWorkflowError())
	var res ScheduledRunResult
	require.NoError(t, env.GetWorkflowResult(&res))
	require.NotZero(t, m.plan.Seed, "unpaired: a seed of its own")
	require.Equal(t, m.plan.Seed, res.Seed)
	require.Empty(t, m.compare.PreviousRunID)
	require.False(t, m.compare.Paired)
	require.Empty(t, m.posted)
}

// TestScheduledRunNotesAWebhookVariableNotSet: the webhook is the reference ${VAR}, and
// the worker has no such variable: PostWebhook fails once (not retried), the run still
// completes, and its note names the variable.
func TestScheduledRunNotesAWebhookVariableNotSet(t *testing.T) {
	t.Setenv("CHAOS_TEST_NO_HOOK", "")
	os.Unsetenv("CHAOS_TEST_NO_HOOK")
	worse := []report.DiffRow{{Cell: "main", Condition: "phantom_success@save", A: report.NewRate(0, 6), B: report.NewRate(6, 6), Worse: 6, P: 0.03, Call: "worse", Method: "McNemar"}}
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(ExperimentWorkflow)
	env.RegisterActivity(a)
	env.OnActivity(a.PlanScheduledRun, mock.Anything, mock.Anything).Return(activities.ScheduledPlan{Plan: planOf(2, 1), OutDir: "/runs/spec/x", Seed: 7}, nil)
	env.OnWorkflow(ExperimentWorkflow, mock.Anything, mock.Anything).Return(run.ExperimentResult{Summary: run.Summary{Trials: 2}}, nil)
	env.OnActivity(a.CompareScheduledRun, mock.Anything, mock.Anything).Return(activities.Comparison{PreviousRunID: "prev", Regressions: worse, Rows: worse}, nil)
	var urls []string
	env.OnActivity(a.PostWebhook, mock.Anything, mock.Anything).Return(func(ctx context.Context, in activities.WebhookInput) error {
		urls = append(urls, in.URL)
		return (&activities.Activities{}).PostWebhook(ctx, in)
	})
	env.ExecuteWorkflow(ScheduledRunWorkflow, ScheduledRunInput{Schedule: "nightly", Spec: run.SpecRef{Name: "spec"}, Webhook: "${CHAOS_TEST_NO_HOOK}", OutRoot: "/runs"})
	require.NoError(t, env.GetWorkflowError())
	var res ScheduledRunResult
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Equal(t, []string{"${CHAOS_TEST_NO_HOOK}"}, urls, "the reference is what the activity gets, tried once")
	require.Contains(t, res.Note, "the webhook was not reached")
	require.Contains(t, res.Note, "the environment variable CHAOS_TEST_NO_HOOK is not set on this worker")
}

func TestScheduledRunIDIsStableAndSortsByTime(t *testing.T) {
	t1 := time.Date(2026, 1, 1, 3, 0, 0, 0, time.UTC)
	a1 := ScheduledRunID("nightly", t1, "run-a")
	require.Equal(t, a1, ScheduledRunID("nightly", t1, "run-a"))
	require.NotEqual(t, a1, ScheduledRunID("nightly", t1, "run-b"))
	require.Less(t, a1, ScheduledRunID("nightly", t1.Add(24*time.Hour), "run-a"))
	require.Equal(t, "nightly", ScheduleName(ScheduleID("nightly")))
	require.Empty(t, ScheduleName("other"))
}
