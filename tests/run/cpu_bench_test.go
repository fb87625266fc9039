package run_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/tests/testkit"
)

// BenchmarkTrialCPU is the harness's own CPU per trial, with a no-op agent (`true`): one
// `chaos server` (the embedded Temporal server and its worker in one process, where the
// trial's workflow, activities and hub run) is started before the timer, then one
// `chaos run --temporal ADDR` of b.N trials is submitted to it. Reported per trial, in
// CPU-seconds:
//
//	server-cpu-s   the server process's own user+system time over the run (/proc/PID/stat)
//	client-cpu-s   the `chaos run` process's (its rusage), once a run, spread over the trials
//	harness-cpu-s  the two together: the goal is <= 0.1
//	start-cpu-s    (not a trial's) the server process's from its exec to ready, once
//	children-cpu-s the server's children that ended (each trial's `chaos reap` and the
//	               agent's shell and `true`)
//	agent-cpu-s    a loop of `sh -c true` in the same run, what the agent itself costs
//	reaper-cpu-s   children less agent: the reaper's share, the harness's too
//
// and, from the batch's history, the median time a trial spends there (trial-ms: its
// RunTrial scheduled to closed) and the activities a trial schedules (activities).
//
//	go test ./tests/run -run '^$' -bench TrialCPU -benchtime 20x
//
// With CHAOS_BENCH_SERVER_PROFILE=FILE the server writes its CPU profile there (its
// CHAOS_CPUPROFILE; the warm-up run included), for `go tool pprof FILE`.
func BenchmarkTrialCPU(b *testing.B) {
	env := testkit.Env(b)
	data := b.TempDir()
	specPath := filepath.Join(b.TempDir(), "overhead.yaml")
	if err := os.WriteFile(specPath, []byte(overheadSpec), 0o644); err != nil {
		b.Fatal(err)
	}
	srvEnv := env
	if prof := os.Getenv("CHAOS_BENCH_SERVER_PROFILE"); prof != "" {
		srvEnv = append(slices.Clone(env), "CHAOS_CPUPROFILE="+prof)
	}
	srv := startServer(b, srvEnv, data, -1)
	// What the server process took to start (the embedded Temporal server, its own
	// worker and chaos's), from exec to ready: paid by every `chaos run` on the default.
	start := procCPU(b, srv.Pid())
	// A first run pays for what is done once (the namespace's caches, the first
	// workflow's code paths): not a trial's cost.
	warm := runChaos(b, env, 5*time.Minute, "run", specPath, "--temporal", srv.Addr, "--data-dir", data,
		"--out", filepath.Join(b.TempDir(), "warm"), "--only", "clean", "--reps", "2")
	if warm.Code != 4 {
		b.Fatalf("warm-up run: exit code %d, want 4\n%s\n%s", warm.Code, warm.Stdout, warm.Stderr)
	}

	before := procCPU(b, srv.Pid())
	b.ResetTimer()
	cmd := exec.Command(chaosBin, "run", specPath, "--temporal", srv.Addr, "--data-dir", data,
		"--out", filepath.Join(b.TempDir(), "out"), "--only", "clean", "--reps", fmt.Sprint(b.N), "--concurrency", "1")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	b.StopTimer()
	if code := cmd.ProcessState.ExitCode(); code != 4 {
		b.Fatalf("chaos run: exit code %d (%v), want 4 (no trial scored: no_tool_call)\n%s", code, err, out)
	}
	after := procCPU(b, srv.Pid())
	client := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()

	// The agent alone, as many times, measured the same way (its children's rusage).
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru0)
	for range b.N {
		if err := exec.Command("sh", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
	}
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru1)
	agent := tv(ru1.Utime) + tv(ru1.Stime) - tv(ru0.Utime) - tv(ru0.Stime)

	n := float64(b.N)
	server := (after.self - before.self).Seconds()
	children := (after.children - before.children).Seconds()
	b.ReportMetric(start.self.Seconds(), "start-cpu-s")
	b.ReportMetric(server/n, "server-cpu-s")
	b.ReportMetric(client.Seconds()/n, "client-cpu-s")
	b.ReportMetric((server+client.Seconds())/n, "harness-cpu-s")
	b.ReportMetric(children/n, "children-cpu-s")
	b.ReportMetric(agent.Seconds()/n, "agent-cpu-s")
	b.ReportMetric((children-agent.Seconds())/n, "reaper-cpu-s")

	c := testkit.DialTemporal(b, srv.Addr)
	defer c.Close()
	runID := runIDOf(b, string(out))
	var trials []time.Duration
	activities := 0
	// The trials run in the experiment's batch (its first, all of them at this size).
	for _, sp := range inlineSpans(fetchHistory(b, c, run.TrialBatchWorkflowID(runID, 0)).Events) {
		trials = append(trials, sp.end.Sub(sp.start))
		activities += sp.activities
	}
	if len(trials) == 0 {
		b.Fatalf("no trial found in the run's histories")
	}
	b.ReportMetric(float64(medianDuration(trials))/1e6, "trial-ms")
	b.ReportMetric(float64(activities)/n, "activities")
}

func medianDuration(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

type cpuTimes struct{ self, children time.Duration }

// procCPU reads a process's user+system time and its waited-for children's from
// /proc/PID/stat (fields 14-17, in clock ticks of 1/100 s).
func procCPU(b *testing.B, pid int) cpuTimes {
	b.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatalf("read the CPU time of process %d: %v", pid, err)
	}
	// The fields after the command's name, which is in parentheses and may hold spaces.
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	tick := func(i int) time.Duration { // i: the field's number in proc(5)
		v, err := strconv.ParseInt(f[i-3], 10, 64)
		if err != nil {
			b.Fatalf("/proc/%d/stat field %d: %v", pid, i, err)
		}
		return time.Duration(v) * 10 * time.Millisecond
	}
	return cpuTimes{self: tick(14) + tick(15), children: tick(16) + tick(17)}
}

func tv(t syscall.Timeval) time.Duration {
	return time.Duration(t.Sec)*time.Second + time.Duration(t.Usec)*time.Microsecond
}
