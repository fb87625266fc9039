package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// startCPUProfile writes a CPU profile of this process to the file named by
// CHAOS_CPUPROFILE, when set, until the returned func is called: how the benchmarks
// (tests/run BenchmarkTrialCPU) see where a `chaos server`'s CPU goes. A profile that
// cannot start is said on stderr and skipped; the command runs as without it.
func startCPUProfile() (stop func()) {
	path := os.Getenv("CHAOS_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	// Not for the children (a server's `chaos reap`, a trial's {wall}): one profile a file.
	os.Unsetenv("CHAOS_CPUPROFILE")
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "chaos: CHAOS_CPUPROFILE: %v\n", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "chaos: CHAOS_CPUPROFILE: %v\n", err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
