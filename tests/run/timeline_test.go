package run_test

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"

	"github.com/crashwall/chaos/run"
)

// runTimeline is where a finished run's time went, read from its histories: the
// ExperimentWorkflow's and its batches', where the trials' steps are activities
// (inlineSpans) (BenchmarkRunThroughput reports it beside the run's time, so that a slow
// run says why).
type runTimeline struct {
	span     time.Duration // the experiment's workflow, started to closed
	toFirst  time.Duration // the experiment's start to its first child's start
	tail     time.Duration // the last child's close to the experiment's close (Aggregate)
	inFlight float64       // mean children open between the first's start and the last's close
	trial    time.Duration // mean child workflow, started to closed
	agent    time.Duration // mean agent activity (RunTrial, RunWatchedAgent or RunAgent), started to completed
	refill   time.Duration // mean gap in the parent: a child's completion to the next child's start initiated
}

// agentActivities are the activities in which a trial's agent runs.
var agentActivities = map[string]bool{"RunTrial": true, "RunWatchedAgent": true, "RunAgent": true}

// readTimeline reads the histories of run runID from the server c is connected to.
func readTimeline(t testing.TB, c client.Client, runID string) runTimeline {
	t.Helper()
	parent := fetchHistory(t, c, run.ExperimentWorkflowID(runID)).Events
	var tl runTimeline
	t0 := parent[0].EventTime.AsTime()
	tl.span = parent[len(parent)-1].EventTime.AsTime().Sub(t0)

	// The trials run in the experiment's batches (TrialBatchWorkflow children), each
	// trial's steps activities named <trial>/<step>/<attempt>.
	var refills []time.Duration
	var spans []trialSpan
	for _, e := range parent {
		if e.EventType == enumspb.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED {
			batch := e.GetChildWorkflowExecutionStartedEventAttributes().GetWorkflowExecution().GetWorkflowId()
			spans = append(spans, inlineSpans(fetchHistory(t, c, batch).Events)...)
		}
	}
	{
		if len(spans) == 0 {
			t.Fatalf("run %s started no trial", runID)
		}
		// The parent's gap between a trial's end and the next trial's start.
		slices.SortFunc(spans, func(a, b trialSpan) int { return a.start.Compare(b.start) })
		for i, sp := range spans {
			var lastEnd time.Time
			for _, before := range spans[:i] {
				if !before.end.After(sp.start) && before.end.After(lastEnd) {
					lastEnd = before.end
				}
			}
			if !lastEnd.IsZero() && i > 0 && !spans[i-1].start.After(lastEnd) {
				refills = append(refills, sp.start.Sub(lastEnd))
			}
		}
	}

	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	var trials, agents []time.Duration
	first, last := time.Time{}, time.Time{}
	for _, sp := range spans {
		edges = append(edges, edge{sp.start, 1}, edge{sp.end, -1})
		trials = append(trials, sp.end.Sub(sp.start))
		agents = append(agents, sp.agent)
		if first.IsZero() || sp.start.Before(first) {
			first = sp.start
		}
		if sp.end.After(last) {
			last = sp.end
		}
	}
	tl.toFirst = first.Sub(t0)
	tl.tail = parent[len(parent)-1].EventTime.AsTime().Sub(last)
	tl.trial, tl.agent, tl.refill = meanDuration(trials), meanDuration(agents), meanDuration(refills)

	// The mean number of children open: the area under the open count over the window.
	slices.SortFunc(edges, func(a, b edge) int { return a.at.Compare(b.at) })
	open, area, at := 0, 0.0, first
	for _, e := range edges {
		area += float64(open) * e.at.Sub(at).Seconds()
		open += e.delta
		at = e.at
	}
	if w := last.Sub(first).Seconds(); w > 0 {
		tl.inFlight = area / w
	}
	return tl
}

// trialSpan is one trial in its batch's history: from its first step's
// scheduling to its last step's close, its agent's activity (started to completed) and
// how many activities it scheduled.
type trialSpan struct {
	id         string
	start, end time.Time
	agent      time.Duration
	activities int
}

// inlineSpans reads the trials of a batch's history: each trial's activity has the id
// <trial id>/<step>/<attempt> (RunTrial's step is run: workflows/trial.go).
func inlineSpans(events []*historypb.HistoryEvent) []trialSpan {
	byID := map[string]*trialSpan{}
	var order []string
	trialOf := map[int64]string{} // scheduled event id -> trial id
	agentStep := map[int64]bool{}
	started := map[int64]time.Time{}
	for _, e := range events {
		at := e.EventTime.AsTime()
		var sched int64
		switch e.EventType {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			a := e.GetActivityTaskScheduledEventAttributes()
			parts := strings.Split(a.GetActivityId(), "/")
			if len(parts) < 3 {
				continue
			}
			id := strings.Join(parts[:len(parts)-2], "/")
			sp := byID[id]
			if sp == nil {
				sp = &trialSpan{id: id, start: at}
				byID[id] = sp
				order = append(order, id)
			}
			sp.activities++
			trialOf[e.EventId] = id
			agentStep[e.EventId] = agentActivities[a.GetActivityType().GetName()]
			continue
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			started[e.GetActivityTaskStartedEventAttributes().GetScheduledEventId()] = at
			continue
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			sched = e.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()
			if agentStep[sched] {
				byID[trialOf[sched]].agent += at.Sub(started[sched])
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED:
			sched = e.GetActivityTaskFailedEventAttributes().GetScheduledEventId()
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
			sched = e.GetActivityTaskTimedOutEventAttributes().GetScheduledEventId()
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_CANCELED:
			sched = e.GetActivityTaskCanceledEventAttributes().GetScheduledEventId()
		default:
			continue
		}
		if id, ok := trialOf[sched]; ok && at.After(byID[id].end) {
			byID[id].end = at
		}
	}
	out := make([]trialSpan, 0, len(order))
	for _, id := range order {
		out = append(out, *byID[id])
	}
	return out
}

func meanDuration(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum / time.Duration(len(ds))
}

// report adds the timeline to b's metrics (ms a trial unless said).
func (tl runTimeline) report(b *testing.B) {
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	b.ReportMetric(tl.inFlight, "in-flight")
	b.ReportMetric(ms(tl.trial), "trial-ms")
	b.ReportMetric(ms(tl.agent), "agent-act-ms")
	b.ReportMetric(ms(tl.trial-tl.agent), "wf-ms")
	b.ReportMetric(ms(tl.refill), "refill-ms")
	b.ReportMetric(ms(tl.toFirst+tl.tail), "first+last-ms")
}

// schedStat is a process's CPU time and the time its threads spent runnable but waiting
// for a CPU (/proc/PID/task/*/schedstat, Linux; threads that ended are not counted).
type schedStat struct{ onCPU, waiting time.Duration }

func readSchedStat(pid int) (schedStat, bool) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return schedStat{}, false
	}
	var s schedStat
	for _, task := range tasks {
		b, err := os.ReadFile(dir + "/" + task.Name() + "/schedstat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			return schedStat{}, false
		}
		on, err1 := strconv.ParseInt(f[0], 10, 64)
		wait, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil {
			return schedStat{}, false
		}
		s.onCPU += time.Duration(on)
		s.waiting += time.Duration(wait)
	}
	return s, true
}

// machineCPU is the whole machine's busy and total CPU time so far (/proc/stat's cpu line).
type machineCPU struct{ busy, total time.Duration }

func readMachineCPU() (machineCPU, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return machineCPU{}, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return machineCPU{}, false
	}
	var m machineCPU
	for i, v := range f[1:] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return machineCPU{}, false
		}
		d := time.Duration(n) * 10 * time.Millisecond
		m.total += d
		if i != 3 && i != 4 { // idle and iowait
			m.busy += d
		}
	}
	return m, true
}

func mustSchedStat(b *testing.B, pid int) schedStat {
	b.Helper()
	s, ok := readSchedStat(pid)
	if !ok {
		b.Fatalf("no /proc/%d/task/*/schedstat to read the server's CPU waits from", pid)
	}
	return s
}

func mustMachineCPU(b *testing.B) machineCPU {
	b.Helper()
	m, ok := readMachineCPU()
	if !ok {
		b.Fatal("no /proc/stat to read the machine's CPU time from")
	}
	return m
}

// childrenCPU is the user+system time of this process's children that ended and were
// waited for.
func childrenCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru)
	return tv(ru.Utime) + tv(ru.Stime)
}
