package run_test

import (
	"github.com/crashwall/chaos/tests/chaosbin"

	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
)

// chaosBin is the chaos binary, built once by TestMain.
var chaosBin string

// exampleSpec is the support-ticket example (19 conditions), as an absolute path.
var exampleSpec string

var updateHistories = flag.Bool("update-histories", false, "rewrite workflows/testdata/*.history.json from a fresh run (TestRecordHistories)")

func TestMain(m *testing.M) {
	flag.Parse()
	bin, cleanup, err := chaosbin.Build()
	if err != nil {
		fmt.Fprintln(os.Stderr, "tests/run:", err)
		os.Exit(1)
	}
	chaosBin = bin
	exampleSpec = filepath.Join(chaosbin.Root(), "examples", "support-ticket.yaml")
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// Bounds on how long a step may take before the test gives up; none is waited out when
// the step is done sooner.
const (
	startTimeout = time.Minute     // a server or worker printing that it is ready
	runTimeout   = 3 * time.Minute // a whole run
	stopTimeout  = 30 * time.Second
)

// testEnv is the environment of every process a test starts: sandboxes (under TMPDIR) and
// the default data directory (under XDG_DATA_HOME) in the test's own temporary folder.
func testEnv(t testing.TB) []string {
	t.Helper()
	tmp := t.TempDir()
	for _, d := range []string{"tmp", "data"} {
		if err := os.MkdirAll(filepath.Join(tmp, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return append(os.Environ(), "TMPDIR="+filepath.Join(tmp, "tmp"), "XDG_DATA_HOME="+filepath.Join(tmp, "data"))
}

// blindAgent is the reference agent that says "Done" whatever happened, as an agent
// command template ({wall} and {spec} are filled in by the harness).
func blindAgent() string {
	return spec.ShellQuote(chaosBin) + " agent scripted --style blind --transport stdio --wall-command {wall} --spec {spec}"
}

// grower is an io.Writer whose readers can wait for it to grow.
type grower struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	grew chan struct{}
}

func newGrower() *grower { return &grower{grew: make(chan struct{})} }

func (g *grower) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.buf.Write(p)
	close(g.grew)
	g.grew = make(chan struct{})
	return len(p), nil
}

// snapshot is what was written so far and a channel closed at the next write.
func (g *grower) snapshot() (string, <-chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.buf.String(), g.grew
}

func (g *grower) String() string { s, _ := g.snapshot(); return s }

// proc is a chaos process a test started.
type proc struct {
	name   string
	cmd    *exec.Cmd
	stdout *grower
	stderr *grower
	done   chan struct{} // closed when the process has exited
	code   int           // its exit code, -1 when a signal ended it
}

// startChaos starts the chaos binary with args; t.Cleanup stops it (SIGINT, then SIGKILL)
// if it is still running.
func startChaos(t testing.TB, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{name: "chaos " + strings.Join(args, " "), stdout: newGrower(), stderr: newGrower(), done: make(chan struct{})}
	p.cmd = exec.Command(chaosBin, args...)
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	// A grandchild that inherited the pipes must not keep Wait from returning.
	p.cmd.WaitDelay = 5 * time.Second
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", p.name, err)
	}
	go func() {
		_ = p.cmd.Wait()
		p.code = p.cmd.ProcessState.ExitCode()
		close(p.done)
	}()
	t.Cleanup(func() { p.stop(t) })
	return p
}

// stop ends the process if it is still running: SIGINT, and SIGKILL if that does not
// end it in time.
func (p *proc) stop(t testing.TB) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
		return
	case <-time.After(stopTimeout):
	}
	t.Logf("%s did not stop on SIGINT within %s; killing it", p.name, stopTimeout)
	_ = p.cmd.Process.Kill()
	<-p.done
}

// kill ends the process with SIGKILL and waits for it.
func (p *proc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// wait waits for the process to exit and returns its exit code.
func (p *proc) wait(t testing.TB, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(timeout):
		t.Fatalf("%s did not exit within %s\nstdout:\n%s\nstderr:\n%s", p.name, timeout, p.stdout, p.stderr)
		return 0
	}
}

// waitStdout waits for the process's stdout to match re and returns the submatches.
func (p *proc) waitStdout(t testing.TB, re *regexp.Regexp, timeout time.Duration) []string {
	t.Helper()
	deadline := time.After(timeout)
	for {
		out, grew := p.stdout.snapshot()
		if m := re.FindStringSubmatch(out); m != nil {
			return m
		}
		select {
		case <-grew:
		case <-p.done:
			if m := re.FindStringSubmatch(p.stdout.String()); m != nil {
				return m
			}
			t.Fatalf("%s exited (code %d) before printing %q\nstdout:\n%s\nstderr:\n%s", p.name, p.code, re, p.stdout, p.stderr)
		case <-deadline:
			t.Fatalf("%s did not print %q within %s\nstdout:\n%s\nstderr:\n%s", p.name, re, timeout, p.stdout, p.stderr)
		}
	}
}

// result is a finished chaos command.
type result struct {
	stdout, stderr string
	code           int
}

// runChaos runs the chaos binary to its end.
func runChaos(t testing.TB, env []string, timeout time.Duration, args ...string) result {
	t.Helper()
	p := startChaos(t, env, args...)
	code := p.wait(t, timeout)
	return result{stdout: p.stdout.String(), stderr: p.stderr.String(), code: code}
}

// mustSucceed fails the test when the command did not exit 0.
func (r result) mustSucceed(t testing.TB, what string) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("%s: exit code %d, want 0\nstdout:\n%s\nstderr:\n%s", what, r.code, r.stdout, r.stderr)
	}
}

// server is a running `chaos server`.
type server struct {
	proc *proc
	addr string // the frontend's host:port
	ui   string // the web UI's URL, "" without one
}

var (
	serverLine = regexp.MustCompile(`(?m)^Temporal server: (\S+) \(namespace `)
	uiLine     = regexp.MustCompile(`(?m)^Temporal web UI: (\S+)$`)
	readyLine  = regexp.MustCompile(`(?m)^ready; Ctrl-C stops$`)
)

// startServer starts `chaos server` on any free port, with its web UI on any free port
// (uiPort 0) or none (-1), and waits for it to say it is ready.
func startServer(t testing.TB, env []string, dataDir string, uiPort int, extra ...string) *server {
	t.Helper()
	args := append([]string{"server", "--data-dir", dataDir, "--port", "0", "--ui-port", strconv.Itoa(uiPort)}, extra...)
	p := startChaos(t, env, args...)
	p.waitStdout(t, readyLine, startTimeout)
	out := p.stdout.String()
	s := &server{proc: p, addr: serverLine.FindStringSubmatch(out)[1]}
	if m := uiLine.FindStringSubmatch(out); m != nil {
		s.ui = m[1]
	}
	return s
}

var workerLine = regexp.MustCompile(`(?m)^worker: joined `)

// startWorker starts `chaos worker` against the frontend at addr and waits until it has
// joined.
func startWorker(t testing.TB, env []string, addr string) *proc {
	t.Helper()
	p := startChaos(t, env, "worker", "--temporal", addr)
	p.waitStdout(t, workerLine, startTimeout)
	return p
}

// waitFor polls cond until it holds; what names the condition in the failure.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// conditionIDs lists the spec's conditions as `chaos faults --json` gives them.
func conditionIDs(t testing.TB, env []string, specPath string) []string {
	t.Helper()
	r := runChaos(t, env, time.Minute, "faults", specPath, "--json")
	r.mustSucceed(t, "chaos faults --json")
	var conds []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &conds); err != nil {
		t.Fatalf("chaos faults --json: %v\n%s", err, r.stdout)
	}
	var ids []string
	for _, c := range conds {
		ids = append(ids, c.ID)
	}
	return ids
}

// exampleCells are the cell keys of the example spec: the combinations of its axes.
func exampleCells(t testing.TB) []string {
	t.Helper()
	s, err := spec.Load(exampleSpec)
	if err != nil {
		t.Fatalf("load the example: %v", err)
	}
	var keys []string
	for _, c := range s.Cells() {
		keys = append(keys, c.Key)
	}
	return keys
}

// trialIDs are the ids of the trials of every cell and condition, one replicate each.
func trialIDs(cells, conds []string) []string {
	var ids []string
	for _, cell := range cells {
		for _, c := range conds {
			ids = append(ids, spec.TrialID(cell, c, 1))
		}
	}
	return ids
}

// planLine is what `chaos run` prints first for the example, one replicate each.
func planLine(cells, conds []string, concurrency int) string {
	perCell := ""
	if len(cells) > 1 {
		perCell = fmt.Sprintf("%d cells x ", len(cells))
	}
	return fmt.Sprintf("plan %d trials of support-ticket: %s%d conditions x 1 replicates, concurrency %d",
		len(cells)*len(conds), perCell, len(conds), concurrency)
}

var runLine = regexp.MustCompile(`(?m)^run (\S+) -> `)

// runIDOf is the run id `chaos run` printed.
func runIDOf(t testing.TB, stdout string) string {
	t.Helper()
	m := runLine.FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("chaos run printed no run id:\n%s", stdout)
	}
	return m[1]
}

// readVerdicts reads verdicts.json and checks it lists every trial of want exactly once
// and nothing else.
func readVerdicts(t testing.TB, out string, want []string) map[string]run.TrialResult {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, "verdicts.json"))
	if err != nil {
		t.Fatalf("read verdicts.json: %v", err)
	}
	var results []run.TrialResult
	if err := json.Unmarshal(b, &results); err != nil {
		t.Fatalf("verdicts.json: %v", err)
	}
	byID := map[string]run.TrialResult{}
	for _, r := range results {
		if _, dup := byID[r.ID]; dup {
			t.Errorf("verdicts.json lists trial %s more than once", r.ID)
		}
		byID[r.ID] = r
		if !slices.Contains(want, r.ID) {
			t.Errorf("verdicts.json lists trial %s, which was not planned", r.ID)
		}
	}
	for _, id := range want {
		if _, ok := byID[id]; !ok {
			t.Errorf("verdicts.json does not list planned trial %s", id)
		}
	}
	return byID
}

// trialFolders are the trial folders of the run folder (trials/<cell>/<condition>/<rep>).
func trialFolders(t testing.TB, out string) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(out, "trials", "*", "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// checkTrialFolder checks a trial's folder: a record that opens with session_start and
// is closed with session_end, the agent's stdout, the spec, and result.json of this very
// trial. It returns the record.
func checkTrialFolder(t testing.TB, out, id string) *record.Log {
	t.Helper()
	dir := filepath.Join(out, "trials", filepath.FromSlash(id))
	parts := strings.Split(id, "/")
	for _, f := range []string{"stdout", "stderr", "spec.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("trial %s: %v", id, err)
		}
	}
	var res run.TrialResult
	if b, err := os.ReadFile(filepath.Join(dir, "result.json")); err != nil {
		t.Errorf("trial %s: %v", id, err)
	} else if err := json.Unmarshal(b, &res); err != nil {
		t.Errorf("trial %s: result.json: %v", id, err)
	} else if res.ID != id || res.Condition != parts[1] {
		t.Errorf("trial %s: result.json is of trial %q, condition %q", id, res.ID, res.Condition)
	}
	l, err := record.ReadFile(filepath.Join(dir, "record.jsonl"))
	if err != nil {
		t.Errorf("trial %s: %v", id, err)
		return nil
	}
	if len(l.Rows) == 0 {
		t.Errorf("trial %s: the record is empty", id)
		return l
	}
	if first := l.Rows[0]; first.Type != record.TypeSessionStart {
		t.Errorf("trial %s: the record's first row is %q, want %s", id, first.Type, record.TypeSessionStart)
	}
	if last := l.Rows[len(l.Rows)-1]; last.Type != record.TypeSessionEnd {
		t.Errorf("trial %s: the record's last row is %q, want %s", id, last.Type, record.TypeSessionEnd)
	}
	return l
}

// exists says whether path exists.
func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

// processes lists the live processes (zombies left out) whose command line or
// environment contains mark, as "pid: command line".
func processes(mark string) []string {
	entries, _ := os.ReadDir("/proc")
	var found []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		dir := filepath.Join("/proc", e.Name())
		stat, err := os.ReadFile(filepath.Join(dir, "stat"))
		if err != nil {
			continue // gone
		}
		// The state follows the command name in parentheses, which may hold spaces.
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			continue
		}
		// The arguments are NUL-separated: read them as one line, as a shell shows them.
		cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		cmdline = bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})
		environ, _ := os.ReadFile(filepath.Join(dir, "environ"))
		if bytes.Contains(cmdline, []byte(mark)) || bytes.Contains(environ, []byte(mark)) {
			found = append(found, fmt.Sprintf("%d: %s", pid, cmdline))
		}
	}
	return found
}

// signal sends sig to the process.
func (p *proc) signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %s: %v", p.name, err)
	}
}
