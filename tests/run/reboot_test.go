package run_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/tests/testkit"
)

// TestHostReboot is a host that goes down under an embedded run: `chaos run` (its
// Temporal server and worker in one process, history in the data directory's SQLite
// file) and every process under it (the reapers, the agents, what they started) are
// killed with SIGKILL at once, the way a reboot ends them, while one trial has finished
// and others run. Then `chaos runs` lists the run as stopped with the command that
// resumes it, and `chaos resume RUN` on the same data directory finishes it: every
// planned trial recorded exactly once with a verdict, the finished trial not run again,
// the interrupted ones run again from fresh folders; the socket folders (wall-*) of the
// killed run's hubs are removed by the resume.
func TestHostReboot(t *testing.T) {
	env, envDir := testkit.EnvDir(t)
	workRoot := filepath.Join(envDir, "tmp", "chaos-work-"+strconv.Itoa(os.Getuid())) // the worker's, under its TMPDIR
	data, tmp := t.TempDir(), t.TempDir()
	out := filepath.Join(tmp, "out")
	conds := []string{"clean", "phantom_success@update_ticket", "transient_error@read_email", "permanent_error@update_ticket"}
	cells := exampleCells(t)
	conds = conds[:max(2, 4/len(cells))]
	ids := trialIDs(cells, conds)

	// The agent takes long enough for the kill to fall while some run and one is done, as
	// the server sees it: a batch reports its finished trials at most every 5 s, so a
	// trial must outlast a report for the progress line to show one done while the next
	// pair still runs.
	agent := `sleep 12; exec ` + blindAgent()
	cmd := exec.Command(chaosBin, "run", exampleSpec, "--data-dir", data, "--out", out,
		"--reps", "1", "--concurrency", "2", "--only", strings.Join(conds, ","), "--", agent)
	cmd.Env = env
	stdout, err := os.Create(filepath.Join(tmp, "run.stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	cmd.Stdout, cmd.Stderr = stdout, stdout
	// A group of its own, as a login session would hold it: the reboot kills the group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		syscall.Kill(-pid, syscall.SIGKILL)
		<-exited
	})
	printed := func() string { b, _ := os.ReadFile(stdout.Name()); return string(b) }

	results := func() []string {
		m, _ := filepath.Glob(filepath.Join(out, "trials", "*", "*", "*", "result.json"))
		return m
	}
	started := func() []string {
		m, _ := filepath.Glob(filepath.Join(out, "trials", "*", "*", "*", "stdout"))
		return m
	}
	// finished counts the trials the server has seen end (chaos run's progress line);
	// done are the trials with a result.json, a few of which may not have told the
	// server yet.
	var done, running []string
	finished := 0
	testkit.WaitFor(t, 2*runTimeout, "a trial to finish while another runs", func() bool {
		finished = doneTrials(printed())
		done, running = results(), started()
		return finished >= 1 && len(running) > len(done) && len(done) < len(ids)
	})
	var runID string
	if m := runLine.FindStringSubmatch(printed()); m != nil {
		runID = m[1]
	} else {
		t.Fatalf("chaos run printed no run id:\n%s", printed())
	}

	// The reboot: every process of the run at once, whatever group or session it is in.
	procs := append(descendants(pid), pid)
	syscall.Kill(-pid, syscall.SIGKILL)
	for _, p := range procs {
		syscall.Kill(p, syscall.SIGKILL)
	}
	killed := time.Now()
	<-exited
	testkit.WaitFor(t, goneWithin, "every process of the run to be gone", func() bool {
		for _, p := range procs {
			if alive(p) {
				return false
			}
		}
		return true
	})
	t.Logf("killed %d processes with %d of %d trials done, %d started", len(procs), len(done), len(ids), len(running))
	// The hubs of the trials that ran leave their socket folders (wall-*), each naming
	// its owner, which is gone.
	stale, _ := filepath.Glob(filepath.Join(workRoot, "wall-*"))
	if len(stale) == 0 {
		t.Fatalf("no socket folder (wall-*) in %s after the kill, while %d trials ran: nothing to see removed", workRoot, len(running)-len(done))
	}

	runs := runChaos(t, env, time.Minute, "runs", "--data-dir", data)
	runs.MustSucceed(t, "chaos runs")
	if line := lineWith(runs.Stdout, runID); !strings.Contains(line, "stopped") || !strings.Contains(line, "chaos resume "+runID) {
		t.Errorf("chaos runs does not list the run as stopped with %q:\n%s", "chaos resume "+runID, runs.Stdout)
	}

	res := runChaos(t, env, 2*runTimeout, "resume", runID, "--data-dir", data)
	if res.Code != 0 {
		t.Fatalf("chaos resume: exit code %d, want 0\nstdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
	}
	// The trials cut short wait out their heartbeat timeout before they run again: the
	// console says so, rather than nothing for a minute.
	if !regexp.MustCompile(`(?m)^(a trial that was|the \d+ trial\(s\)) running when the run stopped.* runs again from a fresh folder once Temporal sees its old worker gone, within \S+ \(the trials' heartbeat timeout\)`).MatchString(res.Stdout) {
		t.Errorf("chaos resume does not say why it waits for the trials that were running:\n%s", res.Stdout)
	}
	// chaos resume's worker removed them as it started.
	for _, dir := range stale {
		if exists(dir) {
			t.Errorf("the socket folder %s of the killed run outlived chaos resume", dir)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(workRoot, "wall-*")); len(left) > 0 {
		t.Errorf("socket folders left after the resumed run ended: %v", left)
	}
	verdicts := readVerdicts(t, out, ids)
	kept := 0
	if dirs := trialFolders(t, out); len(dirs) != len(ids) {
		t.Errorf("%d trial folders, want %d: %v", len(dirs), len(ids), dirs)
	}
	for _, id := range ids {
		l := checkTrialFolder(t, out, id)
		if r := verdicts[id]; r.Outcome != run.OutcomeCompleted || r.Verdict == "" || r.Verdict == report.NoVerdict {
			t.Errorf("trial %s: outcome %q, verdict %q (%s), want %s with a verdict", id, r.Outcome, r.Verdict, r.Reason, run.OutcomeCompleted)
		}
		if l == nil || len(l.Rows) == 0 {
			continue
		}
		dir := filepath.Join(out, "trials", filepath.FromSlash(id))
		began := l.Rows[0].Time
		if !began.After(killed) {
			kept++
		}
		// Cut short by the reboot before its result was written: run again from a
		// fresh folder.
		if contains(running, filepath.Join(dir, "stdout")) && !contains(done, filepath.Join(dir, "result.json")) && !began.After(killed) {
			t.Errorf("trial %s was cut short by the reboot, but its record started at %s, before the kill at %s", id, began, killed)
		}
	}
	// What the server had seen finish is kept, never run again.
	if kept < finished {
		t.Errorf("%d trials kept their record from before the reboot, but the server had seen %d finish", kept, finished)
	}
}

// descendants lists every live process under pid (children, theirs, and so on).
func descendants(pid int) []int {
	parent := map[int]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: the command name may hold spaces.
		i := bytes.LastIndexByte(stat, ')')
		if f := strings.Fields(string(stat[i+1:])); i >= 0 && len(f) > 1 {
			parent[p], _ = strconv.Atoi(f[1])
		}
	}
	var under []int
	for p := range parent {
		for q := parent[p]; q > 1; q = parent[q] {
			if q == pid {
				under = append(under, p)
				break
			}
		}
	}
	return under
}

// alive says whether process pid exists and is not a zombie.
func alive(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
