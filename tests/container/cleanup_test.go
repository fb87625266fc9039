package container

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/container"
	"github.com/crashwall/chaos/tests/testkit"
)

var (
	runLine    = regexp.MustCompile(`(?m)^run (\S+) -> `)
	workerLine = regexp.MustCompile(`(?m)^worker: joined `)
)

// cleanupSpec is the example with its agent in a container and the command given.
func cleanupSpec(t testing.TB, timeout string) string {
	t.Helper()
	path := withRuntime(t, filepath.Join(repoRoot, "examples", "support-ticket.yaml"), t.TempDir(), dockerAgent())
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "\n  timeout: 60s\n") {
		t.Fatal("the example's agent has no `timeout: 60s` line to replace")
	}
	os.WriteFile(path, []byte(strings.Replace(string(b), "\n  timeout: 60s\n", "\n  timeout: "+timeout+"\n", 1)), 0o644)
	return path
}

// containersAppear waits until the run has an agent container running, and returns them:
// a check that none is left after proves nothing unless there were some.
func containersAppear(t testing.TB, dk *container.Client, runID string) []string {
	t.Helper()
	var seen []string
	testkit.WaitFor(t, runTimeout, "an agent container of run "+runID+" to run", func() bool {
		seen = agentContainers(t, dk, runID)
		for _, s := range seen {
			if strings.HasSuffix(s, "(running)") {
				return true
			}
		}
		return false
	})
	return seen
}

// TestNoContainerLeft ends trials every way a trial ends besides its agent's own exit:
// a SIGKILL of the worker mid-trial (the run goes on on another worker), chaos abort, and
// the agent's timeout. No container of the run is left once the run has finished.
func TestNoContainerLeft(t *testing.T) {
	dk := needDocker(t)
	env := testkit.Env(t)
	// The agent sleeps first, so that it is inside its container when its trial is ended.
	slow := func(secs string) string {
		return "sleep " + secs + "; {chaos} agent scripted --style blind --transport stdio --wall-command {wall} --spec {spec}"
	}

	t.Run("worker killed", func(t *testing.T) {
		data, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
		srv := testkit.StartServer(t, chaosBin, env, data, -1, "--no-worker")
		workerA := testkit.Start(t, chaosBin, env, "worker", "--temporal", srv.Addr)
		workerA.WaitStdout(t, workerLine, testkit.StartTimeout)
		p := testkit.Start(t, chaosBin, env, "run", cleanupSpec(t, "2m"), "--temporal", srv.Addr, "--data-dir", data, "--out", out,
			"--only", "clean", "--reps", "1", "--", slow("8"))
		runID := p.WaitStdout(t, runLine, testkit.StartTimeout)[1]
		seen := containersAppear(t, dk, runID)
		workerA.Kill()
		killed := time.Now()
		t.Logf("killed worker A while these ran: %v", seen)
		// The relay in each container sees the hub's socket refuse and ends the agent; the
		// container, started with auto-remove, goes.
		testkit.WaitFor(t, runTimeout, "the killed worker's containers to go", func() bool {
			return len(agentContainers(t, dk, runID)) == 0
		})
		t.Logf("the killed worker's containers were gone %s after the kill", time.Since(killed).Round(100*time.Millisecond))
		workerB := testkit.Start(t, chaosBin, env, "worker", "--temporal", srv.Addr)
		workerB.WaitStdout(t, workerLine, testkit.StartTimeout)
		if code := p.Wait(t, 2*runTimeout); code != 0 {
			t.Fatalf("chaos run: exit %d\nstdout:\n%s\nstderr:\n%s", code, p.Stdout, p.Stderr)
		}
		for id, v := range verdicts(t, out) {
			if v.Outcome != "completed" {
				t.Errorf("%s: outcome %s (%s): the trial should have run again on worker B", id, v.Outcome, v.Reason)
			}
		}
		if left := agentContainers(t, dk, runID); len(left) > 0 {
			t.Errorf("containers of the run left after it finished: %v", left)
		}
	})

	t.Run("chaos abort", func(t *testing.T) {
		data, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
		srv := testkit.StartServer(t, chaosBin, env, data, -1)
		p := testkit.Start(t, chaosBin, env, "run", cleanupSpec(t, "5m"), "--temporal", srv.Addr, "--data-dir", data, "--out", out,
			"--only", "clean", "--", slow("600"))
		runID := p.WaitStdout(t, runLine, testkit.StartTimeout)[1]
		seen := containersAppear(t, dk, runID)
		testkit.Run(t, chaosBin, env, time.Minute, "abort", runID, "--temporal", srv.Addr, "--data-dir", data).MustSucceed(t, "chaos abort")
		if code := p.Wait(t, runTimeout); code != 6 {
			t.Fatalf("chaos run after the abort: exit %d, want 6 (stopped before all its trials ran)\nstdout:\n%s\nstderr:\n%s", code, p.Stdout, p.Stderr)
		}
		t.Logf("aborted while these ran: %v", seen)
		for id, v := range verdicts(t, out) {
			if v.Outcome != "aborted" {
				t.Errorf("%s: outcome %s, want aborted", id, v.Outcome)
			}
		}
		if left := agentContainers(t, dk, runID); len(left) > 0 {
			t.Errorf("containers of the run left after the abort: %v", left)
		}
	})

	t.Run("timeout", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out")
		p := testkit.Start(t, chaosBin, env, "run", cleanupSpec(t, "5s"), "--data-dir", t.TempDir(), "--out", out,
			"--only", "clean", "--reps", "1", "--", slow("600"))
		runID := p.WaitStdout(t, runLine, testkit.StartTimeout)[1]
		seen := containersAppear(t, dk, runID)
		p.Wait(t, runTimeout)
		t.Logf("timed out: %v", seen)
		for id, v := range verdicts(t, out) {
			if v.Outcome != "timed_out" && v.Outcome != "timeout" {
				t.Errorf("%s: outcome %s (%s), want a timeout", id, v.Outcome, v.Reason)
			}
		}
		if left := agentContainers(t, dk, runID); len(left) > 0 {
			t.Errorf("containers of the run left after the timeout: %v", left)
		}
	})
}
