package run_test

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/tests/fixture"
	"github.com/crashwall/chaos/tests/testkit"
)

// TestDurability kills the only worker (SIGKILL) while it runs trials and starts another:
// the run carries on, the killed worker's trials are run again from scratch on the new
// one, and every planned trial is recorded exactly once, with a closed record.
//
//	chaos server --no-worker ── worker A (killed mid-trial) ── worker B (finishes the run)
//	chaos run --temporal ADDR ─┘
func TestDurability(t *testing.T) {
	env := testkit.Env(t)
	data, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
	srv := startServer(t, env, data, -1, "--no-worker")
	workerA := startWorker(t, env, srv.Addr)

	// Six trials or so: these conditions in each of the example's cells.
	conds := []string{"clean", "phantom_success@update_ticket", "transient_error@read_email", "stale_read@get_ticket_field", "empty_success@update_ticket", "permanent_error@update_ticket"}
	cells := exampleCells(t)
	conds = conds[:max(1, 6/len(cells))]
	ids := trialIDs(cells, conds)
	// An agent that takes a while, so the worker dies while agents run. $0 and $1 are the
	// filled-in (shell-quoted) {wall} and {spec}. It leaves two marked sleeps behind, one
	// in a session of its own: the killed worker's agents must not outlive it.
	secs := fmt.Sprintf("300.%d", time.Now().UnixNano()%1_000_000_000)
	mark := "sleep " + secs
	// (The sleeps take their time from a variable, so that the marker is found in their
	// command lines and not in chaos run's.)
	// (chaos's path holds a space: it goes to the nested shell as an argument, "$2", never
	// as text inside its code.)
	agent := `s=` + secs + `; sleep $s & setsid sleep $s & sh -c 'sleep 2; exec "$2" agent scripted --style blind --transport stdio --wall-command "$0" --spec "$1"' {wall} {spec} {chaos}`
	runProc := startChaos(t, env, "run", exampleSpec, "--temporal", srv.Addr, "--data-dir", data, "--out", out,
		"--reps", "1", "--concurrency", "2", "--only", strings.Join(conds, ","), "--", agent)

	// A trial's stdout appears when its agent starts.
	var running []string
	testkit.WaitFor(t, runTimeout, "a trial's agent to start on worker A", func() bool {
		running, _ = filepath.Glob(filepath.Join(out, "trials", "*", "*", "*", "stdout"))
		return len(running) > 0
	})
	// The scan must see them while they run, or finding none after would prove nothing.
	testkit.WaitFor(t, runTimeout, "worker A's agents to start their marked sleeps", func() bool {
		return len(processes(mark)) >= 2
	})
	workerA.Kill()
	killed := time.Now()
	t.Logf("killed worker A while %d trial(s) ran: %v", len(running), running)
	// Worker A's agents, and all they started, go with it (their reaper), before worker B
	// starts any agent of its own.
	var left []string
	if !fixture.Until(t, goneWithin, func() bool { left = processes(mark); return len(left) == 0 }) {
		t.Fatalf("processes of the killed worker's trials outlived it:\n%s", strings.Join(left, "\n"))
	}
	startWorker(t, env, srv.Addr)

	if code := runProc.Wait(t, runTimeout); code != 0 {
		t.Fatalf("chaos run: exit code %d, want 0\nstdout:\n%s\nstderr:\n%s", code, runProc.Stdout, runProc.Stderr)
	}
	if left := processes(mark); len(left) > 0 {
		t.Errorf("processes of the trials outlived the run:\n%s", strings.Join(left, "\n"))
	}
	results := readVerdicts(t, out, ids)
	if dirs := trialFolders(t, out); len(dirs) != len(ids) {
		t.Errorf("%d trial folders, want %d: %v", len(dirs), len(ids), dirs)
	}
	for _, id := range ids {
		l := checkTrialFolder(t, out, id)
		if r := results[id]; r.Outcome != run.OutcomeCompleted {
			t.Errorf("trial %s: outcome %q (%s), want %s", id, r.Outcome, r.Reason, run.OutcomeCompleted)
		}
		if l == nil || len(l.Rows) == 0 {
			continue
		}
		// A trial that was running on worker A was run again: its record is the new
		// attempt's, started after the kill, not the dead attempt's.
		dir := filepath.Join(out, "trials", filepath.FromSlash(id), "stdout")
		for _, r := range running {
			if r == dir && !l.Rows[0].Time.After(killed) {
				t.Errorf("trial %s ran on the killed worker, but its record started at %s, before the kill at %s", id, l.Rows[0].Time, killed)
			}
		}
	}
}

// TestServerRestart kills `chaos server` (SIGKILL) while a run goes through it and starts
// it again on the same data directory and port: chaos run says it is waiting, follows the
// run again when the server is back, and reports the run's real result (exit 0, every
// trial listed once), not the lost connection's error.
func TestServerRestart(t *testing.T) {
	env := testkit.Env(t)
	data, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	portArgs := []string{"--port", strconv.Itoa(port)}
	srv := startServer(t, env, data, -1, portArgs...)

	conds := []string{"clean", "phantom_success@update_ticket"}
	ids := trialIDs(exampleCells(t), conds)
	agent := `sleep 3; exec ` + blindAgent()
	p := startChaos(t, env, "run", exampleSpec, "--temporal", srv.Addr, "--data-dir", data, "--out", out,
		"--reps", "1", "--concurrency", "2", "--only", strings.Join(conds, ","), "--", agent)
	testkit.WaitFor(t, runTimeout, "a trial's agent to start", func() bool {
		started, _ := filepath.Glob(filepath.Join(out, "trials", "*", "*", "*", "stdout"))
		return len(started) > 0
	})
	srv.Kill()
	testkit.WaitFor(t, runTimeout, "chaos run to say it is waiting for the server", func() bool {
		return strings.Contains(p.Stderr.String(), "waiting for the Temporal server to come back")
	})
	startServer(t, env, data, -1, portArgs...)
	if code := p.Wait(t, 2*runTimeout); code != 0 {
		t.Fatalf("chaos run: exit code %d, want 0\nstdout:\n%s\nstderr:\n%s", code, p.Stdout, p.Stderr)
	}
	if n := strings.Count(p.Stderr.String(), "waiting for the Temporal server"); n != 1 {
		t.Errorf("chaos run said it was waiting %d times, want once:\n%s", n, p.Stderr)
	}
	results := readVerdicts(t, out, ids)
	for _, id := range ids {
		if r := results[id]; r.Outcome != run.OutcomeCompleted {
			t.Errorf("trial %s: outcome %q (%s), want %s", id, r.Outcome, r.Reason, run.OutcomeCompleted)
		}
	}
	if want := fmt.Sprintf("%d trials", len(ids)); !strings.Contains(p.Stdout.String(), want) {
		t.Errorf("chaos run does not report the run's result (%q):\n%s", want, p.Stdout)
	}
}
