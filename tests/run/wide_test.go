package run_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/tests/testkit"
)

// waitingAgent writes, in a folder of its own, an agent that waits until the file
// release exists (or prints the worker it runs on first, from CHAOS_TEST_WORKER, and
// then waits). It is a script named name, so its processes are found by their name
// (/proc/PID/comm) and by nothing else: chaos run's command line and the reapers' hold
// its path, never its name as theirs.
func waitingAgent(t *testing.T, name string) (agent, release string) {
	t.Helper()
	dir := t.TempDir()
	release = filepath.Join(dir, "release")
	script := filepath.Join(dir, name)
	testkit.WriteFile(t, script, "#!/bin/sh\necho \"worker=$CHAOS_TEST_WORKER\"\nwhile [ ! -e \"$1\" ]; do sleep 1; done\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	return "exec " + spec.ShellQuote(script) + " " + spec.ShellQuote(release), release
}

// statusField is a field of /proc/PID/status ("Threads", "VmRSS"), as its first number.
func statusField(pid int, field string) int {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		if v, ok := bytes.CutPrefix(line, []byte(field+":")); ok {
			if f := strings.Fields(string(v)); len(f) > 0 {
				n, _ := strconv.Atoi(f[0])
				return n
			}
		}
	}
	return -1
}

// openFiles counts the descriptors process pid has open.
func openFiles(pid int) int {
	fds, _ := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "fd"))
	return len(fds)
}

// overheadSpecFile writes overheadSpec (its agent: the one after --) into a folder of its own.
func overheadSpecFile(t *testing.T) string { return writeOverheadSpec(t) }

// ranOn counts a finished run's trials by the worker that ran each (the first line of
// its stdout, from waitingAgent).
func ranOn(t *testing.T, out string, ids []string) map[string]int {
	t.Helper()
	by := map[string]int{}
	for _, id := range ids {
		b, err := os.ReadFile(filepath.Join(out, "trials", filepath.FromSlash(id), "stdout"))
		if err != nil {
			t.Errorf("trial %s: %v", id, err)
			continue
		}
		first, _, _ := strings.Cut(string(b), "\n")
		by[strings.TrimPrefix(first, "worker=")]++
	}
	return by
}

// cleanIDs are the ids of n replicates of the clean condition of a one-cell spec.
func cleanIDs(n int) []string {
	var ids []string
	for rep := 1; rep <= n; rep++ {
		ids = append(ids, spec.TrialID("main", "clean", rep))
	}
	return ids
}

// allCompleted checks every trial of the run folder is recorded once, completed.
func allCompleted(t *testing.T, out string, ids []string) {
	t.Helper()
	results := readVerdicts(t, out, ids)
	for _, id := range ids {
		if r := results[id]; r.Outcome != run.OutcomeCompleted {
			t.Errorf("trial %s: outcome %q (%s), want %s", id, r.Outcome, r.Reason, run.OutcomeCompleted)
		}
	}
}

// TestRunAsWide: a run is as wide as it asks, or refused before it starts (issue 27).
//
//   - chaos run --concurrency 32 (its embedded worker) has 32 agents running at once,
//     counted as processes, never more, and records every trial completed;
//   - a concurrency the machine cannot hold (its open files, ulimit -n) is refused at plan
//     time: exit 1, one line, no run folder;
//   - on a chaos server with no worker a run is refused (no worker takes its trials); with
//     two chaos workers of two trials each, --concurrency 5 is refused naming both and
//     their slots, and --concurrency 4 runs on both.
func TestRunAsWide(t *testing.T) {
	if _, err := os.Stat("/proc/self/comm"); err != nil {
		t.Fatal("needs /proc to count processes")
	}

	t.Run("32 at once", func(t *testing.T) {
		const wide, trials = 32, 40
		env := testkit.Env(t)
		name := fmt.Sprintf("wide%d", time.Now().UnixNano()%1_000_000_000)
		agent, release := waitingAgent(t, name)
		data, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
		p := startChaos(t, env, "run", overheadSpecFile(t), "--data-dir", data, "--out", out,
			"--only", "clean", "--reps", strconv.Itoa(trials), "--concurrency", strconv.Itoa(wide), "--", agent)
		most := 0
		testkit.WaitFor(t, runTimeout, fmt.Sprintf("%d agents running at once", wide), func() bool {
			most = max(most, testkit.CountProcesses(name))
			if code, done := p.Exited(); done {
				t.Fatalf("chaos run ended (exit %d) with at most %d agents at once, want %d\nstdout:\n%s\nstderr:\n%s", code, most, wide, p.Stdout, p.Stderr)
			}
			return most >= wide
		})
		// The worker's own figures with 32 agents in flight (no OS thread per agent).
		t.Logf("%d agents at once; chaos run: %d threads, %d open files, %d kB resident", most,
			statusField(p.Pid(), "Threads"), openFiles(p.Pid()), statusField(p.Pid(), "VmRSS"))
		if most > wide {
			t.Errorf("%d agents at once, more than the %d asked", most, wide)
		}
		// None beyond the 32 starts while they run: the ones waiting wait.
		if n := testkit.CountProcesses(name); n > wide {
			t.Errorf("%d agents at once, more than the %d asked", n, wide)
		}
		testkit.WriteFile(t, release, "")
		// The agent never meets the wall: nothing is scored, so the run exits 4.
		if code := p.Wait(t, runTimeout); code != 4 {
			t.Fatalf("chaos run: exit code %d, want 4 (no trial scored)\nstdout:\n%s\nstderr:\n%s", code, p.Stdout, p.Stderr)
		}
		allCompleted(t, out, cleanIDs(trials))
	})

	t.Run("more than the machine holds", func(t *testing.T) {
		env := testkit.Env(t)
		out := filepath.Join(t.TempDir(), "out")
		// 1,200 open files hold (1,200 - what chaos has open - 1,024) / 16 trials: fewer than 50.
		cmd := exec.Command("sh", "-c", `ulimit -n 1200 && exec "$@"`, "sh", chaosBin, "run", overheadSpecFile(t),
			"--data-dir", t.TempDir(), "--out", out, "--only", "clean", "--reps", "60", "--concurrency", "50", "--", "true")
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		r := testkit.Result{Code: cmd.ProcessState.ExitCode(), Stdout: stdout.String(), Stderr: stderr.String()}
		refusedInOneLine(t, r, err, "concurrency 50: this machine cannot hold 50 trials at once: its limit of open files (1200, ulimit -n)")
		if exists(out) {
			t.Errorf("a refused run made its folder %s", out)
		}
	})

	t.Run("two workers", func(t *testing.T) {
		env := testkit.Env(t)
		data := t.TempDir()
		srv := startServer(t, env, data, -1, "--no-worker")
		specPath := overheadSpecFile(t)
		runArgs := func(out string, concurrency, trials int, agent string) []string {
			return []string{"run", specPath, "--temporal", srv.Addr, "--data-dir", data, "--out", out,
				"--only", "clean", "--reps", strconv.Itoa(trials), "--concurrency", strconv.Itoa(concurrency), "--", agent}
		}

		r := runChaos(t, env, runTimeout, runArgs(filepath.Join(t.TempDir(), "none"), 1, 1, "true")...)
		refusedInOneLine(t, r, nil, "no worker takes the trials of task queue chaos")

		// Two workers, standing for two machines: each its own sandboxes (TMPDIR) and a
		// name its agents print.
		var pids []int
		for _, w := range []string{"A", "B"} {
			wenv := testkit.Env(t, "CHAOS_TEST_WORKER="+w)
			p := startChaos(t, wenv, "worker", "--temporal", srv.Addr, "--max-trials", "2")
			p.WaitStdout(t, workerLine, testkit.StartTimeout)
			pids = append(pids, p.Pid())
		}
		r = runChaos(t, env, runTimeout, runArgs(filepath.Join(t.TempDir(), "five"), 5, 6, "true")...)
		want := "concurrency 5 is more than the workers of task queue chaos hold: 4 trials at once ("
		refusedInOneLine(t, r, nil, want)
		for _, pid := range pids {
			if !strings.Contains(r.Stderr, fmt.Sprintf("%d@", pid)) || !strings.Contains(r.Stderr, ": 2") {
				t.Errorf("the refusal does not name worker %d and its 2 slots: %s", pid, r.Stderr)
			}
		}

		const trials = 8
		name := fmt.Sprintf("two%d", time.Now().UnixNano()%1_000_000_000)
		agent, release := waitingAgent(t, name)
		out := filepath.Join(t.TempDir(), "out")
		p := startChaos(t, env, runArgs(out, 4, trials, agent)...)
		// Four at once, which neither worker holds alone.
		testkit.WaitFor(t, runTimeout, "4 agents running at once on the two workers", func() bool {
			if code, done := p.Exited(); done {
				t.Fatalf("chaos run ended (exit %d)\nstdout:\n%s\nstderr:\n%s", code, p.Stdout, p.Stderr)
			}
			return testkit.CountProcesses(name) >= 4
		})
		testkit.WriteFile(t, release, "")
		if code := p.Wait(t, runTimeout); code != 4 {
			t.Fatalf("chaos run: exit code %d, want 4 (no trial scored)\nstdout:\n%s\nstderr:\n%s", code, p.Stdout, p.Stderr)
		}
		ids := cleanIDs(trials)
		allCompleted(t, out, ids)
		by := ranOn(t, out, ids)
		t.Logf("trials by worker: %v", by)
		if by["A"] == 0 || by["B"] == 0 || by["A"]+by["B"] != trials {
			t.Errorf("trials by worker: %v; want both workers used, %d trials in all", by, trials)
		}
	})
}

// refusedInOneLine checks a command refused with exit 1 and one line on stderr that
// starts "chaos: " and holds want.
func refusedInOneLine(t *testing.T, r testkit.Result, err error, want string) {
	t.Helper()
	if r.Code != 1 {
		t.Errorf("exit code %d (%v), want 1\nstdout:\n%s\nstderr:\n%s", r.Code, err, r.Stdout, r.Stderr)
	}
	msg := strings.TrimRight(r.Stderr, "\n")
	if strings.Count(msg, "\n") != 0 || !strings.HasPrefix(msg, "chaos: ") || !strings.Contains(msg, want) {
		t.Errorf("stderr %q: want one line starting \"chaos: \" with %q", r.Stderr, want)
	}
}
