package run_test

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/tests/testkit"
)

// scaleTrials is how many trials TestScale runs. It runs only with CHAOS_SCALE=1 (make
// scale, part of make test), since 10,000 trials take long on two cores.
var scaleTrials = flag.Int("scale-trials", 10000, "trials of TestScale's runs")

// scaleHistoryLimit lowers the experiment's continue-as-new interval (0: the default,
// 500), to check TestScale itself at a small scale.
var scaleHistoryLimit = flag.Int("scale-history-limit", 0, "trials per workflow run before continue-as-new in TestScale")

// TestScale runs a 10,000-trial run of a no-op agent (`true`) on the embedded server
// (`chaos server`, its worker in the same process) and checks that it finishes and writes
// its folder, every trial listed once; then the same run again, aborted (Ctrl-C) once a
// tenth of it is done, which must write its folder too, with no trial failed.
//
// It reports, read from the server (GetWorkflowHistory over every run of the experiment's
// continue-as-new chain), the largest activity payload and each run's history, and
// asserts bounds that grow neither with the number of trials planned nor with those
// finished:
//
//   - the start input (the spec and the plan's layout, spec.Layout) is at most 16 KiB
//     (the spec here is a few hundred bytes): the plan travels as its layout, never as
//     one row per trial;
//   - no activity input or result is larger than 16 KiB: results never travel as one
//     payload (they stay in the trial folders; Aggregate takes the layout and reads them);
//   - no run of the chain starts more trials than its history limit (500), nor has more
//     than 20 events per trial it started plus 50, nor a history larger than 4 KiB per
//     trial it started plus 64 KiB (each trial's input holds the spec, a few hundred bytes
//     here).
func TestScale(t *testing.T) {
	if os.Getenv("CHAOS_SCALE") != "1" {
		t.Skip("set CHAOS_SCALE=1 (make scale) to run 10,000 trials")
	}
	n := *scaleTrials
	env := testkit.Env(t)
	data := t.TempDir()
	specPath := writeOverheadSpec(t)
	srv := startServer(t, env, data, -1, "--max-trials", "16") // the run's --concurrency
	c := testkit.DialTemporal(t, srv.Addr)
	defer c.Close()
	var ids []string
	for rep := 1; rep <= n; rep++ {
		ids = append(ids, spec.TrialID("main", "clean", rep))
	}

	for _, abort := range []bool{false, true} {
		t.Run(fmt.Sprintf("aborted=%v", abort), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			p := startChaos(t, env, "run", specPath, "--temporal", srv.Addr, "--data-dir", data, "--out", out,
				"--only", "clean", "--reps", strconv.Itoa(n), "--concurrency", "16", "--history-limit", strconv.Itoa(*scaleHistoryLimit))
			if abort {
				untilStalled(t, p, func() bool { return doneTrials(p.Stderr.String()) >= n/10 })
				p.Signal(t, syscall.SIGINT)
			}
			untilStalled(t, p, func() bool { return false })
			// The agent (true) never meets the wall, so no trial is scored: a run that ends
			// exits 4, an aborted one 6 (stopped before all its trials ran).
			want := 4
			if abort {
				want = 6
			}
			if code := p.Wait(t, time.Minute); code != want {
				t.Fatalf("chaos run: exit code %d, want %d\nstdout:\n%s\nstderr (end):\n%s", code, want, p.Stdout, tail(p.Stderr.String(), 2000))
			}
			results := readVerdicts(t, out, ids)
			counts := map[string]int{}
			for id, r := range results {
				counts[r.Outcome]++
				if r.Outcome == run.OutcomeFailed && counts[r.Outcome] <= 10 {
					// The folder goes with the test: say why here.
					t.Logf("trial %s failed: %s", id, r.Reason)
				}
			}
			t.Logf("%d trials: %v", len(results), counts)
			if abort {
				if counts[run.OutcomeFailed] != 0 || counts[run.OutcomeAborted] == 0 || counts[run.OutcomeCompleted] < n/10 {
					t.Errorf("aborted run: outcomes %v, want >= %d completed, the rest aborted, none failed", counts, n/10)
				}
			} else if counts[run.OutcomeCompleted] != n {
				t.Errorf("outcomes %v, want all %d completed", counts, n)
			}
			for _, f := range []string{"manifest.json", "summary.txt", "report.html"} {
				if !exists(filepath.Join(out, f)) {
					t.Errorf("the run folder has no %s", f)
				}
			}
			checkHistories(t, c, run.ExperimentWorkflowID(runIDOf(t, p.Stdout.String())))
		})
	}
}

// stallTimeout is how long TestScale waits for the next trial to finish: it bounds a
// stuck run, never a slow one (a run of 10,000 trials takes hours on two busy cores).
const stallTimeout = 15 * time.Minute

// untilStalled waits until cond holds or chaos run p has exited; the test fails if no
// trial finishes for stallTimeout meanwhile.
func untilStalled(t *testing.T, p *testkit.Proc, cond func() bool) {
	t.Helper()
	last, since := -1, time.Now()
	for !cond() && alive(p.Pid()) {
		if n := doneTrials(p.Stderr.String()); n != last {
			last, since = n, time.Now()
		} else if time.Since(since) > stallTimeout {
			t.Fatalf("no trial finished for %s (%d done)\nstderr (end):\n%s", stallTimeout, last, tail(p.Stderr.String(), 2000))
		}
		time.Sleep(time.Second)
	}
}

var doneLine = regexp.MustCompile(`(\d+)/\d+ trials done`)

// doneTrials is the last count of finished trials chaos run printed.
func doneTrials(stderr string) int {
	m := doneLine.FindAllStringSubmatch(stderr, -1)
	if len(m) == 0 {
		return 0
	}
	n, _ := strconv.Atoi(m[len(m)-1][1])
	return n
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// histories is what checkHistories read: the largest history of the run's workflows (the
// experiment's continue-as-new chain and any child workflows it started), in events and
// bytes, the trials started in it, and the bounds those trials give it.
type histories struct {
	runs, largestActivity                 int
	largestEvents, largestBytes, trialsIn int
	boundEvents, boundBytes               int
}

// checkHistories walks the experiment's continue-as-new chain back from its last run and,
// in each, its batches (TrialBatchWorkflow children), reports each history and the
// largest activity payload, checks the bounds TestScale states, and returns the largest
// history of them all beside its bound.
func checkHistories(t testing.TB, c client.Client, workflowID string) histories {
	t.Helper()
	var hs histories
	note := func(events, bytes, trials, boundEvents, boundBytes int) {
		if events > hs.largestEvents {
			hs.largestEvents, hs.largestBytes, hs.trialsIn = events, bytes, trials
			hs.boundEvents, hs.boundBytes = boundEvents, boundBytes
		}
	}
	runID := ""
	for {
		h := history(t, c, workflowID, runID)
		hs.runs++
		started := h.Events[0].GetWorkflowExecutionStartedEventAttributes()
		input := proto.Size(started.GetInput())
		size, trials, activity := 0, 0, 0
		var batches []string
		for _, e := range h.Events {
			size += proto.Size(e)
			if a := e.GetChildWorkflowExecutionStartedEventAttributes(); a != nil {
				batches = append(batches, a.GetWorkflowExecution().GetWorkflowId())
			}
			if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
				activity = max(activity, proto.Size(a.GetInput()))
			}
			if a := e.GetActivityTaskCompletedEventAttributes(); a != nil {
				activity = max(activity, proto.Size(a.GetResult()))
			}
		}
		for _, id := range batches {
			bh := history(t, c, id, "")
			bsize, btrials := 0, 0
			for _, e := range bh.Events {
				bsize += proto.Size(e)
				if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
					activity = max(activity, proto.Size(a.GetInput()))
					if strings.HasSuffix(a.GetActivityId(), "/run/1") {
						btrials++
					}
				}
				if a := e.GetActivityTaskCompletedEventAttributes(); a != nil {
					activity = max(activity, proto.Size(a.GetResult()))
				}
			}
			bstart := proto.Size(bh.Events[0].GetWorkflowExecutionStartedEventAttributes().GetInput())
			t.Logf("  batch %s: %d trials, %d events, %d bytes, start input %d bytes", id, btrials, len(bh.Events), bsize, bstart)
			if btrials > run.DefaultBatchSize {
				t.Errorf("batch %s ran %d trials, over %d", id, btrials, run.DefaultBatchSize)
			}
			if len(bh.Events) > 10*btrials+50 {
				t.Errorf("batch %s: %d events for %d trials, over 10 a trial + 50", id, len(bh.Events), btrials)
			}
			if bsize > btrials*3<<10+64<<10 {
				t.Errorf("batch %s: a history of %d bytes for %d trials, over 3 KiB a trial + 64 KiB", id, bsize, btrials)
			}
			if bstart > 16<<10 {
				t.Errorf("batch %s: a start input of %d bytes, over 16 KiB", id, bstart)
			}
			trials += btrials
			note(len(bh.Events), bsize, btrials, 10*btrials+50, btrials*3<<10+64<<10)
		}
		t.Logf("run %d of the chain (%s): %d events, %d bytes, start input %d bytes, %d batches, %d trials started, largest activity payload %d bytes",
			hs.runs, started.GetOriginalExecutionRunId(), len(h.Events), size, input, len(batches), trials, activity)
		if input > 16<<10 {
			t.Errorf("a start input of %d bytes, over 16 KiB", input)
		}
		if activity > 16<<10 {
			t.Errorf("an activity payload of %d bytes, over 16 KiB", activity)
		}
		if len(h.Events) > 40*len(batches)+50 {
			t.Errorf("%d events for %d batches, over 40 a batch + 50", len(h.Events), len(batches))
		}
		if limit := cmp.Or(*scaleHistoryLimit, run.DefaultHistoryLimit); trials > limit {
			t.Errorf("%d trials started in one run of the chain, over the history limit %d", trials, limit)
		}
		if size > len(batches)*8<<10+64<<10 {
			t.Errorf("a history of %d bytes for %d batches, over 8 KiB a batch + 64 KiB", size, len(batches))
		}
		note(len(h.Events), size, trials, 40*len(batches)+50, len(batches)*8<<10+64<<10)
		hs.largestActivity = max(hs.largestActivity, activity)
		prev := started.GetContinuedExecutionRunId()
		if prev == "" {
			break
		}
		runID = prev
	}
	t.Logf("%d runs in the chain; largest activity payload %d bytes; largest history %d events, %d bytes (%d trials started in it; bound %d events, %d bytes)",
		hs.runs, hs.largestActivity, hs.largestEvents, hs.largestBytes, hs.trialsIn, hs.boundEvents, hs.boundBytes)
	return hs
}

// BenchmarkScale is make bench's 10,000-trial run (-scale-trials; b.N is not used): the
// run of TestScale (a no-op agent, true, 16 at once on chaos server --max-trials 16),
// timed from chaos run's start to its exit, against a plain loop that starts sh -c true
// as many times, 16 at once (loop-s, x-loop). Beside them, from the server, the run's
// largest workflow history in events and bytes (largest-events, largest-bytes) and the
// documented bound for the trials started in it (bound-events: 20 a trial + 50;
// bound-bytes: 4 KiB a trial + 64 KiB; docs/ARCHITECTURE.md), and the harness's CPU a
// trial (harness-cpu-s/trial: the server with its worker and what it started, and chaos
// run).
//
//	go test ./tests/run -run '^$' -bench '^BenchmarkScale$' -benchtime 1x -timeout 600m
//	go test ./tests/run -run '^$' -bench '^BenchmarkScale$' -benchtime 1x -scale-trials 20   (a check of the benchmark)
func BenchmarkScale(b *testing.B) {
	n := *scaleTrials
	const concurrency = 16
	env := testkit.Env(b)
	data := b.TempDir()
	specPath := writeOverheadSpec(b)
	srv := startServer(b, env, data, -1, "--max-trials", strconv.Itoa(concurrency))
	measured := false
	var ms []metric
	b.Run(fmt.Sprintf("trials=%d", n), func(b *testing.B) {
		if measured {
			reportMetrics(b, ms)
			return
		}
		out := filepath.Join(b.TempDir(), "out")
		cpu0, client0 := procCPU(b, srv.Pid()), childrenCPU()
		start := time.Now()
		r := runChaos(b, env, time.Duration(n)*5*time.Second+runTimeout, "run", specPath, "--temporal", srv.Addr, "--data-dir", data, "--out", out,
			"--only", "clean", "--reps", strconv.Itoa(n), "--concurrency", strconv.Itoa(concurrency))
		runTime := time.Since(start)
		cpu1, client1 := procCPU(b, srv.Pid()), childrenCPU()
		if r.Code != 4 { // the agent never meets the wall: nothing scored
			b.Fatalf("chaos run: exit code %d, want 4\nstdout:\n%s\nstderr (end):\n%s", r.Code, r.Stdout, tail(r.Stderr, 2000))
		}
		c := testkit.DialTemporal(b, srv.Addr)
		hs := checkHistories(b, c, run.ExperimentWorkflowID(runIDOf(b, r.Stdout)))
		c.Close()
		loop := plainLoop(b, n, concurrency, "true")
		harness := (cpu1.self + cpu1.children - cpu0.self - cpu0.children) + (client1 - client0)
		ms = []metric{
			{float64(n), "trials"},
			{runTime.Seconds(), "run-s"},
			{loop.Seconds(), "loop-s"},
			{runTime.Seconds() / loop.Seconds(), "x-loop"},
			{float64(hs.largestEvents), "largest-events"},
			{float64(hs.boundEvents), "bound-events"},
			{float64(hs.largestBytes), "largest-bytes"},
			{float64(hs.boundBytes), "bound-bytes"},
			{harness.Seconds() / float64(n), "harness-cpu-s/trial"},
		}
		measured = true
		reportMetrics(b, ms)
	})
}

// history is every event of one run of a workflow (runID "": the latest).
func history(t testing.TB, c client.Client, workflowID, runID string) *historypb.History {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	it := c.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatalf("history of %s (run %q): %v", workflowID, runID, err)
		}
		h.Events = append(h.Events, e)
	}
	if len(h.Events) == 0 {
		t.Fatalf("no history for %s (run %q)", workflowID, runID)
	}
	return h
}

// scaleServer and scaleWorkflow name a running experiment (a server's address and the
// experiment's workflow id) whose continue-as-new chain TestScaleHistories reads: to
// check a long run's histories while it goes on.
var (
	scaleServer   = flag.String("scale-server", "", "TestScaleHistories: the Temporal server's address")
	scaleWorkflow = flag.String("scale-workflow", "", "TestScaleHistories: the experiment's workflow id (chaos-run-<run id>)")
)

// TestScaleHistories reports and checks, as TestScale does at its end, the histories and
// largest activity payload of an experiment that may still be running: every run of its
// chain so far, the one in progress included.
func TestScaleHistories(t *testing.T) {
	if *scaleServer == "" || *scaleWorkflow == "" {
		t.Skip("give -scale-server and -scale-workflow to read a running experiment's histories")
	}
	c := testkit.DialTemporal(t, *scaleServer)
	defer c.Close()
	checkHistories(t, c, *scaleWorkflow)
}
