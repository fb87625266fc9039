package run_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/tests/chaosbin"
	"github.com/crashwall/chaos/tests/testkit"
)

// chaosBin is the chaos binary, built once by TestMain.
var chaosBin string

// exampleSpec is the support-ticket example (19 conditions), as an absolute path.
var exampleSpec = filepath.Join(chaosbin.Root(), "examples", "support-ticket.yaml")

var updateHistories = flag.Bool("update-histories", false, "rewrite workflows/testdata/*.history.json from a fresh run (TestRecordHistories)")

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(testkit.Main(m, "tests/run", func(bin string) { chaosBin = bin }))
}

// runTimeout bounds a whole run; none is waited out when the run is done sooner. It is a
// guard against a hang, not a measure of speed: a run on a machine at load 50 takes minutes.
const runTimeout = 15 * time.Minute

// blindAgent is the reference agent that says "Done" whatever happened, as an agent
// command template ({wall} and {spec} are filled in by the harness).
func blindAgent() string {
	return spec.ShellQuote(chaosBin) + " agent scripted --style blind --transport stdio --wall-command {wall} --spec {spec}"
}

// startChaos starts the chaos binary with args; the test's cleanup stops it.
func startChaos(t testing.TB, env []string, args ...string) *testkit.Proc {
	t.Helper()
	return testkit.Start(t, chaosBin, env, args...)
}

// runChaos runs the chaos binary to its end.
func runChaos(t testing.TB, env []string, timeout time.Duration, args ...string) testkit.Result {
	t.Helper()
	return testkit.Run(t, chaosBin, env, timeout, args...)
}

// startServer starts `chaos server` on any free port, with its web UI on any free port
// (uiPort 0) or none (-1), and waits for it to say it is ready.
func startServer(t testing.TB, env []string, dataDir string, uiPort int, extra ...string) *testkit.Server {
	t.Helper()
	return testkit.StartServer(t, chaosBin, env, dataDir, uiPort, extra...)
}

var workerLine = regexp.MustCompile(`(?m)^worker: joined `)

// startWorker starts `chaos worker` against the frontend at addr and waits until it has
// joined.
func startWorker(t testing.TB, env []string, addr string) *testkit.Proc {
	t.Helper()
	p := startChaos(t, env, "worker", "--temporal", addr)
	p.WaitStdout(t, workerLine, testkit.StartTimeout)
	return p
}

// conditionIDs lists the spec's conditions as `chaos faults --json` gives them.
func conditionIDs(t testing.TB, env []string, specPath string) []string {
	t.Helper()
	r := runChaos(t, env, time.Minute, "faults", specPath, "--json")
	r.MustSucceed(t, "chaos faults --json")
	var conds []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &conds); err != nil {
		t.Fatalf("chaos faults --json: %v\n%s", err, r.Stdout)
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

// goneWithin bounds the wait for killed processes to finish dying: time enough on a
// starved machine, and well short of the 300 s the tests' marked sleeps last, so that one
// that outlived its trial is still there to be seen.
const goneWithin = 30 * time.Second

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
