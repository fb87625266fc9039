package run_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/tests/testkit"
)

// describeStall says where a run's experiment workflow waits: its status, pending
// workflow task and children, and the last events of its history, for a test whose run
// did not end.
func describeStall(t testing.TB, addr, runID string) string {
	t.Helper()
	c := testkit.DialTemporal(t, addr)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var b strings.Builder
	id := run.ExperimentWorkflowID(runID)
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return fmt.Sprintf("describe %s: %v", id, err)
	}
	info := d.GetWorkflowExecutionInfo()
	fmt.Fprintf(&b, "workflow %s run %s: %s, %d events\n", id, info.GetExecution().GetRunId(), info.GetStatus(), info.GetHistoryLength())
	if wt := d.GetPendingWorkflowTask(); wt != nil {
		fmt.Fprintf(&b, "pending workflow task: %s scheduled %s started %s attempt %d\n", wt.GetState(), wt.GetScheduledTime().AsTime(), wt.GetStartedTime().AsTime(), wt.GetAttempt())
	}
	for _, ch := range d.GetPendingChildren() {
		// A child the parent still waits for but that has closed is a completion lost on
		// its way to the parent.
		status := "?"
		if cd, err := c.DescribeWorkflowExecution(ctx, ch.GetWorkflowId(), ch.GetRunId()); err == nil {
			status = cd.GetWorkflowExecutionInfo().GetStatus().String()
		} else {
			status = err.Error()
		}
		fmt.Fprintf(&b, "pending child: %s (its own status: %s)\n", ch.GetWorkflowId(), status)
	}
	for _, a := range d.GetPendingActivities() {
		fmt.Fprintf(&b, "pending activity: %s %s attempt %d last failure %v\n", a.GetActivityType().GetName(), a.GetState(), a.GetAttempt(), a.GetLastFailure())
	}
	it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var lines []string
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			lines = append(lines, fmt.Sprintf("history: %v", err))
			break
		}
		lines = append(lines, fmt.Sprintf("%4d %s %s", e.GetEventId(), e.GetEventTime().AsTime().Format("15:04:05.000"), e.GetEventType()))
	}
	if len(lines) > 60 {
		lines = lines[len(lines)-60:]
	}
	b.WriteString(strings.Join(lines, "\n"))
	return b.String()
}
