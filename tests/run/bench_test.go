package run_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/tests/testkit"
)

// overheadSpec is the smallest spec: one cell, one tool nobody calls, an agent that does
// nothing. Its trials cost what the harness costs (and none is scored: the agent never
// meets the wall, so the run exits 4).
const overheadSpec = `name: overhead
task: Nothing.
agent:
  command: "true"
tools:
  - name: noop
    description: Answers nothing.
    effect: none
    reply: '{}'
`

// writeOverheadSpec writes overheadSpec into a folder of its own and returns its path.
func writeOverheadSpec(tb testing.TB) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "overhead.yaml")
	if err := os.WriteFile(path, []byte(overheadSpec), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// BenchmarkTrialOverhead is the harness's own cost per trial: trials whose agent is `true`
// (it starts and exits at once), against a plain loop that starts `sh -c true` as many
// times, which is the process the harness starts for each trial.
//
// What is timed, and why: one `chaos server` (the embedded Temporal server on SQLite with
// its worker in the same process, as `chaos run` runs it by default) is started once,
// before the timer: starting a server is a cost per run at most, never per trial. Each
// sub-benchmark then submits one run of b.N trials (a one-cell spec's clean condition, b.N
// replicates) with the chaos binary, `chaos run --temporal ADDR`, and times it from the
// command's start to its exit: what a user waits for. That includes everything a trial
// goes through (workflow and activity round trips through Temporal and SQLite, the
// workspace, the hub, the agent's process group, the watcher, Verify, Teardown) and, once
// per run, the CLI's start and Aggregate, spread over the b.N trials; run it with a fixed
// -benchtime such as 20x. At concurrency 4, ns/trial is the run's time over its trials:
// the cost of a trial when four share the machine.
//
//	go test ./tests/run -run '^$' -bench TrialOverhead -benchtime 20x
func BenchmarkTrialOverhead(b *testing.B) {
	env := testkit.Env(b)
	data := b.TempDir()
	specPath := writeOverheadSpec(b)
	srv := startServer(b, env, data, -1)

	b.Run("baseline", func(b *testing.B) {
		plainLoop(b, b.N, 1, "true")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/trial")
	})
	for _, concurrency := range []int{1, 4} {
		b.Run(fmt.Sprintf("concurrency=%d", concurrency), func(b *testing.B) {
			runNoOpTrials(b, env, specPath, srv.Addr, data, concurrency)
			perTrial := float64(b.Elapsed().Nanoseconds()) / float64(b.N)

			baseline := float64(plainLoop(b, b.N, 1, "true").Nanoseconds()) / float64(b.N)
			b.ReportMetric(perTrial, "ns/trial")
			b.ReportMetric(baseline, "baseline-ns/trial")
			b.ReportMetric(perTrial/baseline, "x-baseline")
		})
	}
}

// BenchmarkTrialsPerSecond is trials per second of a no-op agent (`true`) at concurrency
// 1, 4, 16 and 64, against a plain loop that starts `sh -c true` as many times with as
// many at once, in the same run: one `chaos run --temporal ADDR` of b.N trials on one
// `chaos server --no-worker` and a `chaos worker --max-trials 64`. Run it with a fixed
// count (-benchtime 64x): b.N is the trials of each run.
//
//	make bench  (go test ./tests/run -run '^$' -bench '^BenchmarkTrialsPerSecond$' -benchtime 64x)
func BenchmarkTrialsPerSecond(b *testing.B) {
	env := testkit.Env(b)
	data := b.TempDir()
	specPath := writeOverheadSpec(b)
	srv := startServer(b, env, data, -1, "--no-worker")
	w := startChaos(b, env, "worker", "--temporal", srv.Addr, "--max-trials", "64")
	w.WaitStdout(b, workerLine, testkit.StartTimeout)
	for _, concurrency := range []int{1, 4, 16, 64} {
		b.Run(fmt.Sprintf("concurrency=%d", concurrency), func(b *testing.B) {
			runNoOpTrials(b, env, specPath, srv.Addr, data, concurrency)
			perSec := float64(b.N) / b.Elapsed().Seconds()
			base := float64(b.N) / plainLoop(b, b.N, concurrency, "true").Seconds()
			b.ReportMetric(perSec, "trials/s")
			b.ReportMetric(base, "baseline-trials/s")
			b.ReportMetric(base/perSec, "x-slower-than-baseline")
		})
	}
}

// runNoOpTrials runs b.N clean trials of the no-op agent at concurrency on the server at
// addr, the benchmark's timer running for the run only.
func runNoOpTrials(b *testing.B, env []string, specPath, addr, data string, concurrency int) {
	b.Helper()
	out := filepath.Join(b.TempDir(), "out")
	b.ResetTimer()
	r := runChaos(b, env, time.Duration(b.N)*time.Minute, "run", specPath, "--temporal", addr, "--data-dir", data,
		"--out", out, "--only", "clean", "--reps", fmt.Sprint(b.N), "--concurrency", fmt.Sprint(concurrency))
	b.StopTimer()
	// The agent (true) calls nothing, so no trial is scored (it never met the wall):
	// chaos run says so with exit 4, which is the run completing as it should.
	if r.Code != 4 || !strings.Contains(r.Stdout, "wall_not_reached") {
		b.Fatalf("chaos run: exit code %d, want 4 (no trial scored: wall_not_reached)\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
}

// plainLoop starts `sh -c agent` n times, concurrency at once, and returns how long it
// took.
func plainLoop(b *testing.B, n, concurrency int, agent string) time.Duration {
	start := time.Now()
	sem := make(chan struct{}, concurrency)
	errs := make(chan error, n)
	for range n {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			errs <- exec.Command("sh", "-c", agent).Run()
		}()
	}
	for range cap(sem) {
		sem <- struct{}{}
	}
	close(errs)
	for err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start)
}

// rssSpec is overheadSpec with an agent that outlives the wait for every trial to be in
// flight: starting 1,000 trials on two busy cores takes longer than the default agent
// timeout (5 minutes), and a trial that timed out would leave the count.
const rssSpec = `name: rss
task: Nothing.
agent:
  command: "sleep 7200"
  timeout: 2h
tools:
  - name: noop
    description: Answers nothing.
    effect: none
    reply: '{}'
`

// rssInFlight are the trials in flight BenchmarkWorkerRSS measures at (a small one, such
// as 4, checks the benchmark itself).
var rssInFlight = flag.String("rss-in-flight", "100,1000", "BenchmarkWorkerRSS: the trials in flight to measure at, comma-separated")

// BenchmarkWorkerRSS is the worker with 100 and 1,000 trials in flight (agents that sleep
// until all have started), against a plain loop (a shell) that starts as many of the same
// agents and waits for them, measured in the same sub-benchmark. Each runs once, whatever
// b.N: a run of that many trials at that concurrency on a chaos worker --max-trials of as
// many, aborted once all are in flight. It reports:
//
//   - in-flight: the trials in flight reached (agents running at once), and reach-s the
//     time from chaos run's start to all of them (loop-reach-s: the loop's, x-loop-reach
//     the ratio);
//   - worker-peak-MB: the worker's peak resident memory (VmHWM; goal <= 400 MB at 1,000,
//     issue 27), against the loop's (baseline-peak-MB, x-baseline), and worker-threads its
//     OS threads then (no thread per waiting agent: wait_linux.go);
//   - lost: the trial attempts lost on the way and run again (none expected: a trial that
//     waits for a slot waits in the trial queue).
//
// No trial can end before all are in flight (its agent sleeps two hours): one that does
// has failed, and the benchmark fails with its reason rather than wait on a count that
// can no longer grow.
//
//	go test ./tests/run -run '^$' -bench WorkerRSS -benchtime 1x -timeout 240m
//	go test ./tests/run -run '^$' -bench WorkerRSS -benchtime 1x -rss-in-flight 4   (a check of the benchmark)
func BenchmarkWorkerRSS(b *testing.B) {
	env := testkit.Env(b)
	specPath := filepath.Join(b.TempDir(), "rss.yaml")
	if err := os.WriteFile(specPath, []byte(rssSpec), 0o644); err != nil {
		b.Fatal(err)
	}
	var sizes []int
	for _, f := range strings.Split(*rssInFlight, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			b.Fatalf("-rss-in-flight %q: want counts of trials, comma-separated", *rssInFlight)
		}
		sizes = append(sizes, n)
	}
	// The testing package calls a sub-benchmark with b.N = 1 and then again with the
	// -benchtime count: the measure is made once and reported both times.
	measured := map[int][]metric{}
	for _, inFlight := range sizes {
		b.Run(fmt.Sprintf("in-flight=%d", inFlight), func(b *testing.B) {
			if m, ok := measured[inFlight]; ok {
				reportMetrics(b, m)
				return
			}
			data, out := b.TempDir(), filepath.Join(b.TempDir(), "out")
			srv := startServer(b, env, data, -1, "--no-worker")
			w := startChaos(b, env, "worker", "--temporal", srv.Addr, "--max-trials", fmt.Sprint(inFlight))
			w.WaitStdout(b, workerLine, testkit.StartTimeout)
			start := time.Now()
			p := startChaos(b, env, "run", specPath, "--temporal", srv.Addr, "--data-dir", data, "--out", out,
				"--only", "clean", "--reps", fmt.Sprint(inFlight), "--concurrency", fmt.Sprint(inFlight))
			// However long it takes (2 cores at load 59 started 50 in 20 minutes): only an
			// agent count that stops growing, or a trial that ended, fails it.
			untilNoGrowth(b, fmt.Sprintf("%d agents to run", inFlight), inFlight, func() int {
				if ended := endedTrials(out); len(ended) > 0 {
					b.Fatalf("%d trials ended before all %d were in flight (%d agents running), the first: %s\nworker stderr (end):\n%s",
						len(ended), inFlight, startedAgents(out), ended[0], tail(w.Stderr.String(), 3000))
				}
				return startedAgents(out)
			})
			reach := time.Since(start)
			reached := startedAgents(out)
			rss, threads := peakRSS(b, w.Pid()), statusField(w.Pid(), "Threads")
			lost := lostAttempts(b, srv.Addr)
			b.Logf("%d trials in flight after %s (load %s); worker %d threads; %d trial attempts were lost on the way and run again",
				reached, reach.Round(time.Second), loadAverage(), threads, lost)
			p.Signal(b, syscall.SIGINT)
			p.Wait(b, time.Duration(inFlight)*6*time.Second)

			loopStart := time.Now()
			loop := exec.Command("sh", "-c", fmt.Sprintf("for i in $(seq %d); do sleep 7200 & done; wait", inFlight))
			loop.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its agents go with it
			if err := loop.Start(); err != nil {
				b.Fatal(err)
			}
			testkit.WaitFor(b, time.Duration(inFlight)*time.Second, "the plain loop to start its agents", func() bool {
				return children(loop.Process.Pid) >= inFlight
			})
			loopReach := time.Since(loopStart)
			base := peakRSS(b, loop.Process.Pid)
			_ = syscall.Kill(-loop.Process.Pid, syscall.SIGKILL)
			_ = loop.Wait()
			m := []metric{
				{float64(reached), "in-flight"},
				{reach.Seconds(), "reach-s"},
				{loopReach.Seconds(), "loop-reach-s"},
				{reach.Seconds() / max(loopReach.Seconds(), 1e-3), "x-loop-reach"},
				{float64(rss) / (1 << 20), "worker-peak-MB"},
				{float64(base) / (1 << 20), "baseline-peak-MB"},
				{float64(rss) / float64(max(base, 1)), "x-baseline"},
				{float64(threads), "worker-threads"},
				{float64(lost), "lost"},
			}
			measured[inFlight] = m
			reportMetrics(b, m)
		})
	}
}

// metric is one figure a benchmark reports, and its unit.
type metric struct {
	value float64
	unit  string
}

func reportMetrics(b *testing.B, ms []metric) {
	for _, m := range ms {
		b.ReportMetric(m.value, m.unit)
	}
}

// startedAgents counts the trial folders of run folder out whose agent has started (it
// has a stdout file). A lost trial's folder is made again from scratch, so its agent
// counts once.
func startedAgents(out string) int {
	started, _ := filepath.Glob(filepath.Join(out, "trials", "*", "*", "*", "stdout"))
	return len(started)
}

// endedTrials are the trials of run folder out that have a result: "ID: outcome: reason".
func endedTrials(out string) []string {
	paths, _ := filepath.Glob(filepath.Join(out, "trials", "*", "*", "*", "result.json"))
	var ended []string
	for _, path := range paths {
		var r run.TrialResult
		if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &r) == nil {
			ended = append(ended, fmt.Sprintf("%s: %s: %s", r.ID, r.Outcome, r.Reason))
		}
	}
	return ended
}

// lostAttempts counts the trial attempts lost (worker_lost) and run again on the server at
// addr: the RunTrial activities (`<trial>/run/<n>`) of a trial's second and later
// attempts, in the histories of the runs and of their batches (workflows/batch.go), where
// the trials are.
func lostAttempts(b *testing.B, addr string) int {
	c := testkit.DialTemporal(b, addr)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	n, batches := 0, 0
	for _, kind := range []string{"ExperimentWorkflow", "TrialBatchWorkflow"} {
		req := &workflowservice.ListWorkflowExecutionsRequest{Query: "WorkflowType='" + kind + "'"}
		for {
			resp, err := c.ListWorkflow(ctx, req)
			if err != nil {
				b.Logf("count the lost trial attempts: %v", err)
				return -1
			}
			for _, e := range resp.GetExecutions() {
				if kind == "TrialBatchWorkflow" {
					batches++
				}
				it := c.GetWorkflowHistory(ctx, e.GetExecution().GetWorkflowId(), e.GetExecution().GetRunId(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
				for it.HasNext() {
					ev, err := it.Next()
					if err != nil {
						b.Logf("count the lost trial attempts: %v", err)
						return -1
					}
					id := ev.GetActivityTaskScheduledEventAttributes().GetActivityId()
					if _, attempt, ok := strings.Cut(id, "/run/"); ok && attempt != "1" {
						n++
					}
				}
			}
			if len(resp.GetNextPageToken()) == 0 {
				break
			}
			req.NextPageToken = resp.GetNextPageToken()
		}
	}
	if batches == 0 {
		b.Logf("count the lost trial attempts: no batch workflow found, so no trial was looked at")
		return -1
	}
	return n
}

// loadAverage is the machine's load average over the last 1, 5 and 15 minutes.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

// peakRSS is a process's peak resident set (VmHWM), in bytes.
func peakRSS(b *testing.B, pid int) int64 {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatalf("read the peak RSS of process %d: %v", pid, err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	b.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

// children counts the processes whose parent is pid.
func children(pid int) int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: the command name may hold spaces.
		i := strings.LastIndexByte(string(stat), ')')
		if f := strings.Fields(string(stat[i+1:])); i >= 0 && len(f) > 1 && f[1] == strconv.Itoa(pid) {
			n++
		}
	}
	return n
}

// untilNoGrowth waits until count reaches want; it fails only when count stays the same
// for stallTimeout (a stuck run, not a slow one).
func untilNoGrowth(tb testing.TB, what string, want int, count func() int) {
	tb.Helper()
	last, since := -1, time.Now()
	for {
		n := count()
		if n >= want {
			return
		}
		if n != last {
			last, since = n, time.Now()
		} else if time.Since(since) > stallTimeout {
			tb.Fatalf("waiting for %s: stuck at %d for %s", what, n, stallTimeout)
		}
		time.Sleep(time.Second)
	}
}
