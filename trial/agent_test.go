package trial

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crashwall/chaos/tests/fixture"

	"github.com/crashwall/chaos/proxies/stdio"
	"github.com/crashwall/chaos/run"
)

// agentInput runs command in a sandbox of its own, without a hub.
func agentInput(t *testing.T, yaml []byte, command string) run.AgentInput {
	t.Helper()
	in := trialInput(t, yaml, examplePath, "clean", "")
	return run.AgentInput{
		Trial:     in,
		Workspace: run.Workspace{Dir: t.TempDir(), TrialDir: t.TempDir()},
		Hub:       run.HubInfo{URL: "http://127.0.0.1:9", Command: command},
	}
}

// groupAlive lists the live (not zombie) processes of the process group.
func groupAlive(t *testing.T, pgid int) []int {
	t.Helper()
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return nil
	}
	// Members remain: they may be zombies waiting for their new parent to reap them.
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc to tell zombies from live processes: %v", err)
	}
	var alive []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces, so read after the last ')'.
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(fields) < 3 || fields[2] != strconv.Itoa(pgid) || fields[0] == "Z" {
			continue
		}
		alive = append(alive, pid)
	}
	return alive
}

// goneWithin bounds the wait for killed processes to finish dying: time enough on a
// starved machine, and well short of the 300 s (or more) the tests' processes sleep, so
// that one that was not killed is still there to be seen.
const goneWithin = time.Minute

// waitGroupGone waits (goneWithin at most) for the group's processes to finish dying.
func waitGroupGone(t *testing.T, pgid int) {
	t.Helper()
	var alive []int
	if !fixture.Until(t, goneWithin, func() bool { alive = groupAlive(t, pgid); return len(alive) == 0 }) {
		t.Fatalf("processes %v of the agent's group %d are still alive", alive, pgid)
	}
}

func TestRunAgentCancelKillsTheGroup(t *testing.T) {
	h, env := newHost(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env.ctx = ctx
	// The shell writes its process group (field 5 of its stat): under chaos reap the
	// reaper leads the group, not the shell.
	in := agentInput(t, exampleYAML(t), `cut -d' ' -f5 /proc/$$/stat > pgid; sleep 300 & sleep 300`)

	type outcome struct {
		res run.AgentResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := execute[run.AgentResult](t, env, h.RunAgent, in)
		done <- outcome{res, err}
	}()
	pgid := fixture.WaitForPID(t, filepath.Join(in.Workspace.Dir, "pgid"))
	if len(groupAlive(t, pgid)) == 0 {
		t.Fatal("the agent's group is not running")
	}
	cancel()
	var o outcome
	fixture.Eventually(t, "RunAgent to return after the cancel", func() bool {
		select {
		case o = <-done:
			return true
		default:
			return false
		}
	})
	if o.err == nil {
		t.Errorf("a cancelled RunAgent returned %+v and no error", o.res)
	}
	waitGroupGone(t, pgid)
}

func TestRunAgentKillsWhatTheAgentLeft(t *testing.T) {
	h, env := newHost(t)
	in := agentInput(t, exampleYAML(t), `sleep 300 & echo $! > child; exit 3`)
	res := must[run.AgentResult](t, env, h.RunAgent, in)
	if res.ExitCode != 3 || res.TimedOut || res.Error != "" {
		t.Errorf("result %+v; want exit code 3", res)
	}
	child := fixture.WaitForPID(t, filepath.Join(in.Workspace.Dir, "child"))
	gone := fixture.Until(t, goneWithin, func() bool {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(child) + "/stat")
		return err != nil || strings.Contains(string(b), ") Z ") // gone, or a zombie waiting for init
	})
	if !gone {
		t.Fatalf("the agent's background child %d outlived it", child)
	}
}

func TestRunAgentTimeout(t *testing.T) {
	tests := []struct {
		name     string
		command  string
		exitCode int
	}{
		{"stops on SIGTERM", `touch "$CHAOS_TRIAL_DIR_READY"; sleep 30`, 128 + int(syscall.SIGTERM)},
		{"killed when it ignores SIGTERM", `trap '' TERM; touch "$CHAOS_TRIAL_DIR_READY"; sleep 30`, 128 + int(syscall.SIGKILL)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, env := newHost(t)
			in := agentInput(t, exampleYAML(t, "timeout: 60s", "timeout: 1s"), strings.ReplaceAll(tt.command, "$CHAOS_TRIAL_DIR_READY", "ready"))
			start := time.Now()
			res := must[run.AgentResult](t, env, h.RunAgent, in)
			// On a starved machine the timeout can come before the shell has set its trap:
			// the agent then dies of the SIGTERM, rightly. The exit code is checked for an
			// agent that was ready (its file written after the trap), never a duration.
			ready := fileExists(filepath.Join(in.Workspace.Dir, "ready"))
			if !res.TimedOut || (ready && res.ExitCode != tt.exitCode) {
				t.Errorf("result %+v (ready %v); want timed out with exit code %d", res, ready, tt.exitCode)
			}
			if !ready {
				t.Logf("the agent was not ready when its timeout came (a starved machine): exit %d", res.ExitCode)
			}
			if took := time.Since(start); took < time.Second {
				t.Errorf("took %s; want at least the 1s timeout", took)
			}
		})
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func TestRunAgentOutputAndEnvironment(t *testing.T) {
	h, env := newHost(t)
	in := agentInput(t, exampleYAML(t, "  timeout: 60s\n", "  timeout: 60s\n  env: {GREETING: hello}\n"),
		`pwd; echo "$GREETING $CHAOS_TRIAL_ID $CHAOS_WALL_URL $CHAOS_AXIS_MODEL_SIZE"; echo oops >&2`)
	in.Trial.Trial.Axes = map[string]string{"model.size": "large"}
	res := must[run.AgentResult](t, env, h.RunAgent, in)
	if res.ExitCode != 0 || res.Error != "" || res.Duration <= 0 {
		t.Fatalf("result %+v", res)
	}
	stdout, _ := os.ReadFile(filepath.Join(in.Workspace.TrialDir, "stdout"))
	stderr, _ := os.ReadFile(filepath.Join(in.Workspace.TrialDir, "stderr"))
	wantDir, _ := filepath.EvalSymlinks(in.Workspace.Dir)
	want := wantDir + "\nhello " + in.Trial.Trial.ID + " http://127.0.0.1:9 large\n"
	if string(stdout) != want || string(stderr) != "oops\n" {
		t.Errorf("stdout %q, stderr %q; want %q, \"oops\\n\"", stdout, stderr, want)
	}
}

// TestRunAgentEnvSecrets: agent.env's ${VAR}s are filled in from the worker's
// environment where the agent starts, so the spec (and so the workflow's input) holds the
// reference only; the agent sees the value, and its stdout file holds the value's marker
// where it echoed it; a variable the worker lacks is a start failure naming it.
func TestRunAgentEnvSecrets(t *testing.T) {
	const secret = "sk-test-4f1c9a"
	t.Setenv("CHAOS_TEST_KEY", secret)
	h, env := newHost(t)
	in := agentInput(t, exampleYAML(t, "  timeout: 60s\n", "  timeout: 60s\n  env: {API_KEY: 'Bearer ${CHAOS_TEST_KEY}'}\n"), `echo "$API_KEY"; echo "${API_KEY%?????}"`)
	if spec := string(in.Trial.Spec.YAML); strings.Contains(spec, secret) || !strings.Contains(spec, "${CHAOS_TEST_KEY}") {
		t.Fatalf("the trial's spec should hold the reference, not the value:\n%s", spec)
	}
	res := must[run.AgentResult](t, env, h.RunAgent, in)
	stdout, _ := os.ReadFile(filepath.Join(in.Workspace.TrialDir, "stdout"))
	// All but its last five characters are no longer the value, so kept: proof the
	// agent saw it.
	if want := "[redacted:API_KEY]\nBearer sk-test-4\n"; res.Error != "" || string(stdout) != want {
		t.Errorf("result %+v, stdout %q; want %q", res, stdout, want)
	}

	in = agentInput(t, exampleYAML(t, "  timeout: 60s\n", "  timeout: 60s\n  env: {API_KEY: '${CHAOS_TEST_UNSET_KEY}'}\n"), `echo started`)
	res = must[run.AgentResult](t, env, h.RunAgent, in)
	if want := "agent.env API_KEY: the environment variable CHAOS_TEST_UNSET_KEY is not set on this worker"; res.Error != want {
		t.Errorf("error %q, want %q", res.Error, want)
	}
	if b, _ := os.ReadFile(filepath.Join(in.Workspace.TrialDir, "stdout")); len(b) != 0 {
		t.Errorf("the agent started without its variable: stdout %q", b)
	}
}

func TestRunAgentCannotStart(t *testing.T) {
	h, env := newHost(t)
	in := agentInput(t, exampleYAML(t), `true`)
	in.Workspace.Dir = filepath.Join(t.TempDir(), "missing")
	res, err := execute[run.AgentResult](t, env, h.RunAgent, in)
	if err != nil || res.Error == "" {
		t.Errorf("result %+v, error %v; want the start failure in the result", res, err)
	}
}

// TestReapParent: `chaos-relay reap --parent PID` (the reaper RunAgent uses) and
// `chaos reap --parent PID` (without a relay) run their command when their parent is the
// worker they name, whatever that worker's pid (1 in a container), and start nothing
// when their parent is not that worker any more (the worker died before the reaper could
// hear of it).
func TestReapParent(t *testing.T) {
	if !reaping {
		t.Skip("the reaper runs on Linux only")
	}
	relay := stdio.FindRelay(chaosBin)
	if relay == "" {
		t.Fatalf("no chaos-relay next to %s", chaosBin)
	}
	h := &Host{ChaosBin: chaosBin}
	if got := h.reaper(); len(got) != 2 || got[0] != relay || got[1] != "reap" {
		t.Errorf("reaper %q, want the relay next to chaos: [%s reap]", got, relay)
	}
	for _, bin := range []string{relay, chaosBin} {
		t.Run(filepath.Base(bin), func(t *testing.T) {
			run := func(parent string) (string, *os.ProcessState) {
				cmd := exec.Command(bin, "reap", "--parent", parent, "--", "sh", "-c", "sleep 0.2; echo ran")
				out, _ := cmd.Output()
				return string(out), cmd.ProcessState
			}
			if out, st := run(strconv.Itoa(os.Getpid())); out != "ran\n" || st.ExitCode() != 0 {
				t.Errorf("with its parent's pid: output %q, %v; want ran, exit 0", out, st)
			}
			if out, st := run(strconv.Itoa(os.Getpid() + 1_000_000)); out != "" || st.ExitCode() != 128+int(syscall.SIGKILL) {
				t.Errorf("with another pid: output %q, %v; want nothing run and exit %d", out, st, 128+int(syscall.SIGKILL))
			}
			if out, st := run("worker"); out != "" || st.ExitCode() == 0 {
				t.Errorf("with --parent worker: output %q, %v; want nothing run and a non-zero exit", out, st)
			}
		})
	}
}

// marked lists the live (not zombie) processes whose command line holds mark.
func marked(t *testing.T, mark string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc to list processes: %v", err)
	}
	var out []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(cmdline), mark) {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && strings.Contains(string(st[strings.LastIndexByte(string(st), ')'):]), ") Z ") {
			continue
		}
		out = append(out, e.Name()+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return out
}

// TestRunAgentNothingEscapes: an agent that ignores SIGTERM and starts processes that
// leave its process group (a new session, a new group, a double fork, nohup) leaves
// nothing running once its trial ends, by timeout, by a cancel (an abort), or by the
// agent's own exit. The reaper, not the agent, decides: every descendant is killed.
func TestRunAgentNothingEscapes(t *testing.T) {
	if !reaping {
		t.Skip("the reaper runs on Linux only")
	}
	// Each escape starts `sleep MARK`, MARK a number no other process has.
	escapes := []struct{ name, start string }{
		{"setsid", `setsid sleep MARK &`},
		{"double fork", `(sleep MARK &) &`},
		{"new session, double fork", `setsid sh -c 'sleep MARK & sleep MARK &' &`},
		{"new process group", `perl -e 'setpgrp(0, 0); exec "sleep", @ARGV' MARK &`},
		{"nohup", `nohup sleep MARK >/dev/null 2>&1 &`},
		{"many, each in its own session", `for i in 1 2 3 4; do setsid sleep MARK & done`},
	}
	endings := []struct {
		name string
		tail string // what the agent does after starting its escapes
	}{
		{"timeout", `sleep 300`},
		{"cancel", `sleep 300`},
		{"exit", `exit 0`},
	}
	for i, e := range escapes {
		for j, end := range endings {
			t.Run(e.name+"/"+end.name, func(t *testing.T) {
				t.Parallel()
				mark := fmt.Sprintf("778.%d%d%d", os.Getpid()%100000, i, j)
				// trap '' TERM: the shell and every child it starts ignore SIGTERM.
				command := "trap '' TERM\n" + strings.ReplaceAll(e.start, "MARK", mark) + "\necho started > started\n" + end.tail
				yaml := exampleYAML(t)
				if end.name == "timeout" {
					yaml = exampleYAML(t, "timeout: 60s", "timeout: 10s")
				}
				h, env := newHost(t)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				env.ctx = ctx
				in := agentInput(t, yaml, command)
				done := make(chan error, 1)
				go func() {
					_, err := execute[run.AgentResult](t, env, h.RunAgent, in)
					done <- err
				}()
				started := filepath.Join(in.Workspace.Dir, "started")
				var returned bool
				fixture.Eventually(t, "the agent to start its processes", func() bool {
					select {
					case <-done:
						returned = true
						return true
					default:
					}
					_, err := os.Stat(started)
					return err == nil
				})
				if _, err := os.Stat(started); err != nil {
					t.Fatal("the agent ended before it started its processes: nothing was tested")
				}
				if !returned && end.name != "exit" && len(marked(t, mark)) == 0 {
					t.Fatalf("no process carries %s while the agent runs: the scan would prove nothing", mark)
				}
				if end.name == "cancel" {
					cancel()
				}
				if !returned {
					fixture.Eventually(t, "RunAgent to return", func() bool {
						select {
						case <-done:
							return true
						default:
							return false
						}
					})
				}
				// RunAgent returns once the reaper has killed and reaped everything; a
				// moment (goneWithin, well short of the marked sleeps) is allowed for the
				// kernel to finish.
				var left []string
				if !fixture.Until(t, goneWithin, func() bool { left = marked(t, mark); return len(left) == 0 }) {
					for _, l := range left {
						if pid, err := strconv.Atoi(strings.SplitN(l, ":", 2)[0]); err == nil {
							syscall.Kill(pid, syscall.SIGKILL)
						}
					}
					t.Errorf("processes outlived the trial:\n%s", strings.Join(left, "\n"))
				}
			})
		}
	}
}
