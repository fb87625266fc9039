package run_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	specPath := filepath.Join(b.TempDir(), "overhead.yaml")
	if err := os.WriteFile(specPath, []byte(overheadSpec), 0o644); err != nil {
		b.Fatal(err)
	}
	srv := startServer(b, env, data, -1)

	b.Run("baseline", func(b *testing.B) {
		for range b.N {
			if err := exec.Command("sh", "-c", "true").Run(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/trial")
	})
	for _, concurrency := range []int{1, 4} {
		b.Run(fmt.Sprintf("concurrency=%d", concurrency), func(b *testing.B) {
			out := filepath.Join(b.TempDir(), "out")
			b.ResetTimer()
			r := runChaos(b, env, time.Duration(b.N)*time.Minute, "run", specPath, "--temporal", srv.Addr, "--data-dir", data,
				"--out", out, "--only", "clean", "--reps", fmt.Sprint(b.N), "--concurrency", fmt.Sprint(concurrency))
			b.StopTimer()
			// The agent calls nothing, so no trial is scored (it never met the wall):
			// chaos run says so with exit 4, which is the run completing as it should.
			if r.Code != 4 || !strings.Contains(r.Stdout, "no_tool_call") {
				b.Fatalf("chaos run: exit code %d, want 4 (no trial scored: no_tool_call)\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
			}
			perTrial := float64(b.Elapsed().Nanoseconds()) / float64(b.N)

			start := time.Now()
			for range b.N {
				if err := exec.Command("sh", "-c", "true").Run(); err != nil {
					b.Fatal(err)
				}
			}
			baseline := float64(time.Since(start).Nanoseconds()) / float64(b.N)
			b.ReportMetric(perTrial, "ns/trial")
			b.ReportMetric(baseline, "baseline-ns/trial")
			b.ReportMetric(perTrial/baseline, "x-baseline")
		})
	}
}
