package run_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/tests/testkit"
	"github.com/crashwall/chaos/worker"
)

// sqliteVariants are the embedded server's SQLite settings BenchmarkSQLiteSettings
// compares (worker.SQLiteSettingsEnv; "" is the defaults, worker/store.go).
var sqliteVariants = []struct{ name, settings string }{
	{"default", ""},
	{"conns4", "max_conns=4,busy_timeout=10000"},
	{"cache64m", "cache_size=-65536,temp_store=memory,mmap_size=268435456"},
	{"conns4+cache64m", "max_conns=4,busy_timeout=10000,cache_size=-65536,temp_store=memory,mmap_size=268435456"},
}

// BenchmarkSQLiteSettings is the embedded server on each of sqliteVariants with 16 and
// 64 trials in flight: for each, a `chaos server --no-worker` on a fresh data folder with
// those settings and a `chaos worker --max-trials 64`, a warm-up run, then one `chaos run
// --temporal ADDR` of b.N no-op trials (`true`) at concurrency 16 and one at 64. It
// reports trials/s and, per trial, the server's CPU-seconds (the Temporal server and its
// SQLite alone: the trials run in the worker) and the worker's.
//
//	go test ./tests/run -run '^$' -bench SQLiteSettings -benchtime 64x
func BenchmarkSQLiteSettings(b *testing.B) {
	specPath := writeOverheadSpec(b)
	for _, v := range sqliteVariants {
		b.Run("settings="+v.name, func(b *testing.B) {
			env := testkit.Env(b)
			data := b.TempDir()
			srvEnv := append(slices.Clone(env), worker.SQLiteSettingsEnv+"="+v.settings)
			srv := startServer(b, srvEnv, data, -1, "--no-worker")
			w := startChaos(b, env, "worker", "--temporal", srv.Addr, "--max-trials", "64")
			w.WaitStdout(b, workerLine, testkit.StartTimeout)
			run := func(b *testing.B, n, concurrency int) {
				r := runChaos(b, env, runTimeout, "run", specPath, "--temporal", srv.Addr, "--data-dir", data,
					"--out", filepath.Join(b.TempDir(), "out"), "--only", "clean", "--reps", fmt.Sprint(n), "--concurrency", fmt.Sprint(concurrency))
				if r.Code != 4 || !strings.Contains(r.Stdout, "wall_not_reached") {
					b.Fatalf("chaos run: exit code %d, want 4 (no trial scored: wall_not_reached)\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
				}
			}
			run(b, 4, 4) // the namespace's caches, the first workflow's code paths
			for _, inFlight := range []int{16, 64} {
				b.Run(fmt.Sprintf("in-flight=%d", inFlight), func(b *testing.B) {
					s0, w0 := procCPU(b, srv.Pid()), procCPU(b, w.Pid())
					start := time.Now()
					b.ResetTimer()
					run(b, b.N, inFlight)
					b.StopTimer()
					elapsed := time.Since(start)
					s1, w1 := procCPU(b, srv.Pid()), procCPU(b, w.Pid())
					n := float64(b.N)
					b.ReportMetric(n/elapsed.Seconds(), "trials/s")
					b.ReportMetric((s1.self-s0.self).Seconds()/n, "server-cpu-s")
					b.ReportMetric((w1.self-w0.self).Seconds()/n, "worker-cpu-s")
				})
			}
		})
	}
}
