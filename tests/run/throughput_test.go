package run_test

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/tests/testkit"
)

// BenchmarkRunThroughput is a whole run of the shape issue 10 measures: 14 conditions of
// the support-ticket example x b.N replicates x its 2 agents, where each trial's agent is
// testdata/agent3.py (a stdlib Python stand-in making three tool calls through {wall}).
// The baseline, measured in the same sub-benchmark, is a plain sequential loop that runs
// the same agent as many times against a standalone `chaos wall --spec --condition C
// --record FILE` of its own, with no Temporal.
//
// As in BenchmarkTrialOverhead, one `chaos server` (embedded Temporal and its worker) is
// started before the timer; each sub-benchmark times `chaos run --temporal ADDR` from the
// command's start to its exit, at the spec's concurrency (4) and at 1. It reports the
// run's and the loop's seconds and x-loop, their ratio, with the floor this machine sets
// (floor-x-loop). Issue 10's goal of 0.33x at concurrency 4 is retired (issue 27: on two
// cores the agents' own CPU alone puts the floor near it); the figures stay as measures.
//
// Beside them, where the run's time went (timeline_test.go), from its histories: the
// trials in flight on average (in-flight), a trial's time in its workflow (trial-ms), in
// its agent's activity (agent-act-ms: the agent's start, its calls, its end, verify and
// teardown) and in the workflow's own round trips (wf-ms, the difference); the parent's
// gap between a child's end and the next start (refill-ms); the fixed costs before the
// first trial and after the last (first+last-ms) and in `chaos run` outside the workflow
// (outside-wf-s). And whether the run had the CPU: its processes' CPU a trial and the
// cores they used on average (run-cpu-s/trial, run-cores: the server with the agents it
// started, and `chaos run`; loop-cpu-s/trial, loop-cores for the loop), the share of all
// the machine's cores busy meanwhile (machine-busy, every process), and the time the
// server's threads were runnable but waiting for a CPU (server-wait-s).
//
//	go test ./tests/run -run '^$' -bench RunThroughput -benchtime 3x
//
// With CHAOS_BENCH_SERVER_PROFILE=FILE the server writes its CPU profile there, as in
// BenchmarkTrialCPU.
func BenchmarkRunThroughput(b *testing.B) {
	env := testkit.Env(b)
	out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	py := strings.TrimSpace(string(out))
	if err != nil || py == "" {
		b.Fatalf("the stand-in agent needs python3 on PATH: %v", err)
	}
	testdata := filepath.Join(filepath.Dir(exampleSpec), "..", "tests", "run", "testdata")
	agent, owncpu := filepath.Join(testdata, "agent3.py"), filepath.Join(testdata, "owncpu.py")
	text, err := os.ReadFile(exampleSpec)
	if err != nil {
		b.Fatal(err)
	}
	yaml := string(text)
	for _, edit := range [][2]string{
		{`command: "{chaos} agent scripted --style {agent} --transport stdio --wall-command {wall} --spec {spec}"`,
			`command: "` + spec.ShellQuote(py) + ` ` + spec.ShellQuote(owncpu) + ` ` + spec.ShellQuote(agent) + ` {wall}"`},
		{"profile: scripted", "profile: generic"},
	} {
		if !strings.Contains(yaml, edit[0]) {
			b.Fatalf("the example has no %q to replace", edit[0])
		}
		yaml = strings.Replace(yaml, edit[0], edit[1], 1)
	}
	specPath := filepath.Join(b.TempDir(), "throughput.yaml")
	if err := os.WriteFile(specPath, []byte(yaml), 0o644); err != nil {
		b.Fatal(err)
	}
	s, err := spec.Load(specPath)
	if err != nil {
		b.Fatal(err)
	}
	conds, err := faults.Generate(s)
	if err != nil {
		b.Fatal(err)
	}
	ids := faults.IDs(conds)[:14]
	agents := len(s.Cells())
	data := b.TempDir()
	srvEnv := env
	if prof := os.Getenv("CHAOS_BENCH_SERVER_PROFILE"); prof != "" {
		srvEnv = append(slices.Clone(env), "CHAOS_CPUPROFILE="+prof)
	}
	srv := startServer(b, srvEnv, data, -1)

	for _, concurrency := range []int{4, 1} {
		b.Run(fmt.Sprintf("concurrency=%d", concurrency), func(b *testing.B) {
			runOut := filepath.Join(b.TempDir(), "out")
			cpu0, sched0, machine0, client0 := procCPU(b, srv.Pid()), mustSchedStat(b, srv.Pid()), mustMachineCPU(b), childrenCPU()
			start := time.Now()
			r := runChaos(b, env, time.Duration(b.N)*30*time.Minute, "run", specPath, "--temporal", srv.Addr, "--data-dir", data,
				"--out", runOut, "--only", strings.Join(ids, ","), "--reps", fmt.Sprint(b.N), "--concurrency", fmt.Sprint(concurrency))
			runTime := time.Since(start)
			cpu1, sched1, machine1, client1 := procCPU(b, srv.Pid()), mustSchedStat(b, srv.Pid()), mustMachineCPU(b), childrenCPU()
			r.MustSucceed(b, "chaos run")
			c := testkit.DialTemporal(b, srv.Addr)
			tl := readTimeline(b, c, runIDOf(b, r.Stdout))
			c.Close()

			records := b.TempDir()
			loop0 := childrenCPU()
			start = time.Now()
			n := 0
			var loopAgentCPU time.Duration
			for range b.N {
				for _, id := range ids {
					for range agents {
						n++
						wall := spec.ShellQuote(chaosBin) + " wall --spec " + spec.ShellQuote(specPath) + " --condition " + spec.ShellQuote(id) +
							" --record " + spec.ShellQuote(filepath.Join(records, fmt.Sprintf("%d.jsonl", n)))
						cmd := exec.Command(py, owncpu, agent, wall)
						cmd.Env = env
						out, err := cmd.CombinedOutput()
						if err != nil {
							b.Fatalf("the loop's agent under %s: %v\n%s", id, err, out)
						}
						loopAgentCPU += agentCPUOf(b, string(out))
					}
				}
			}
			loopTime := time.Since(start)
			loopCPU := childrenCPU() - loop0
			agentCPU := runAgentCPU(b, runOut, n)
			runCPU := (cpu1.self + cpu1.children - cpu0.self - cpu0.children) + (client1 - client0)
			b.ReportMetric(runTime.Seconds(), "run-s")
			b.ReportMetric(loopTime.Seconds(), "loop-s")
			b.ReportMetric(runTime.Seconds()/loopTime.Seconds(), "x-loop")
			// The agent's own CPU a trial (its Python process, as owncpu.py says it: not
			// its shell nor its wall), in the run (agents side by side) and in the loop
			// (one at a time); the rest of the run's CPU a trial is chaos's (the server,
			// the worker and hub, the relay, the reaper and its shell, `chaos run`). The
			// floor: a run whose harness cost nothing, its agents keeping every core busy
			// all along, would last agent-cpu x trials / cores; as a ratio to the loop,
			// the best x-loop any harness could have on this machine.
			cores := float64(runtime.NumCPU())
			b.ReportMetric(agentCPU.Seconds(), "agent-cpu-s/trial")
			b.ReportMetric(loopAgentCPU.Seconds()/float64(n), "loop-agent-cpu-s/trial")
			b.ReportMetric(runCPU.Seconds()/float64(n)-agentCPU.Seconds(), "harness-cpu-s/trial")
			b.ReportMetric(agentCPU.Seconds()*float64(n)/cores/loopTime.Seconds(), "floor-x-loop")
			b.ReportMetric(float64(n), "trials")

			// Where the run's time went (timeline_test.go): its trials' workflow and agent
			// activity, the parent's refill of its window, the fixed costs before the
			// first trial and after the last (in the workflow, and in `chaos run` outside
			// it); and whether it had the CPU: the cores its processes used (the server
			// with the agents it started, and `chaos run`), the machine's busy share of
			// all its cores, the time the server's threads waited for a CPU.
			tl.report(b)
			b.ReportMetric((runTime - tl.span).Seconds(), "outside-wf-s")
			b.ReportMetric(runCPU.Seconds()/float64(n), "run-cpu-s/trial")
			b.ReportMetric(runCPU.Seconds()/runTime.Seconds(), "run-cores")
			b.ReportMetric(loopCPU.Seconds()/float64(n), "loop-cpu-s/trial")
			b.ReportMetric(loopCPU.Seconds()/loopTime.Seconds(), "loop-cores")
			b.ReportMetric(float64(machine1.busy-machine0.busy)/float64(machine1.total-machine0.total), "machine-busy")
			b.ReportMetric((sched1.waiting - sched0.waiting).Seconds(), "server-wait-s")
		})
	}
}

// agentCPUOf is the CPU the stand-in agent said it used (owncpu.py) in its output.
func agentCPUOf(b *testing.B, out string) time.Duration {
	b.Helper()
	i := strings.LastIndex(out, "agent-cpu-s ")
	var sec float64
	if i < 0 {
		b.Fatalf("the agent said no CPU (owncpu.py):\n%s", out)
	}
	if _, err := fmt.Sscan(out[i+len("agent-cpu-s "):], &sec); err != nil {
		b.Fatalf("the agent's CPU: %v\n%s", err, out)
	}
	return time.Duration(sec * float64(time.Second))
}

// runAgentCPU is the stand-in agents' own CPU a trial in the run folder out: what each
// said on its stderr (owncpu.py), every one of the n trials' counted once.
func runAgentCPU(b *testing.B, out string, n int) time.Duration {
	b.Helper()
	var sum time.Duration
	seen := 0
	err := filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "stderr" {
			return err
		}
		text, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sum += agentCPUOf(b, string(text))
		seen++
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	if seen != n {
		b.Fatalf("%d agents' stderr in %s, want one for each of the %d trials", seen, out, n)
	}
	return sum / time.Duration(n)
}
