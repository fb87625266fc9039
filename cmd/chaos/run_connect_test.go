package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/run"
)

// connectSpec is a run whose agent exits at once, never meeting the wall.
const connectSpec = `name: inproc
task: Nothing.
agent:
  command: "true"
  timeout: 60s
tools:
  - name: noop
    description: Answers nothing.
    effect: none
    reply: '{}'
`

// runInProcess runs `chaos run` with args through NewCmdRun in this process, with
// connect in place of the real dial, and returns what it printed and its error.
func runInProcess(t *testing.T, connect func(context.Context, TemporalFlags, bool, string) (*conn, error), args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	ios := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out}
	cmd := NewCmdRun(ios, func(ctx context.Context, o *RunOptions) error {
		o.Connect = connect
		o.NewRunID = func(time.Time) string { return "20261203-000000-abcdef" }
		return runRun(ctx, o)
	})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

func writeConnectSpec(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "inproc.yaml")
	if err := os.WriteFile(path, []byte(connectSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRunDialsAsPlanned: past its plan, chaos run asks for Temporal once, with its own
// worker on the run's own queue, as wide as the trials it will hold at once, and a log
// named after the run; the run folder exists by then; a dial that fails ends the command
// with that error and nothing started.
func TestRunDialsAsPlanned(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	path := writeConnectSpec(t)
	out := filepath.Join(t.TempDir(), "run")
	stop := errors.New("no Temporal in this test")
	var calls []TemporalFlags
	var names []string
	var worker []bool
	printed, err := runInProcess(t, func(_ context.Context, f TemporalFlags, withWorker bool, name string) (*conn, error) {
		calls, names, worker = append(calls, f), append(names, name), append(worker, withWorker)
		return nil, stop
	}, path, "--only", "clean", "--reps", "3", "--concurrency", "2", "--out", out, "--data-dir", t.TempDir())
	if !errors.Is(err, stop) {
		t.Fatalf("error %v, want the dial's\n%s", err, printed)
	}
	if len(calls) != 1 {
		t.Fatalf("dialled %d times, want once", len(calls))
	}
	const id = "20261203-000000-abcdef"
	f := calls[0]
	if f.MaxTrials != 2 || !f.NewRun || f.TaskQueue != run.EmbeddedTaskQueue(id) || !worker[0] || names[0] != "run-"+id {
		t.Errorf("dialled with max trials %d, new run %v, queue %q, worker %v, log %q; want 2, true, %q, true, %q",
			f.MaxTrials, f.NewRun, f.TaskQueue, worker[0], names[0], run.EmbeddedTaskQueue(id), "run-"+id)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("the run folder was not made before the dial: %v", err)
	}
	if !strings.Contains(printed, "3 trials") || strings.Contains(printed, "run "+id+" ->") {
		t.Errorf("want the plan printed and no run started:\n%s", printed)
	}
}

// TestRunInProcess: the whole of chaos run in this process, through the real embedded
// server and worker: both trials run, the folder is written, and a run in which the agent
// never met the wall exits 4 (nothing scored), its trials saying why.
func TestRunInProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded Temporal server")
	}
	t.Setenv("TMPDIR", t.TempDir())
	path := writeConnectSpec(t)
	out := filepath.Join(t.TempDir(), "run")
	dialled := 0
	printed, err := runInProcess(t, func(ctx context.Context, f TemporalFlags, withWorker bool, name string) (*conn, error) {
		dialled++
		return connect(ctx, f, withWorker, name)
	}, path, "--only", "clean", "--reps", "2", "--concurrency", "2", "--out", out, "--data-dir", t.TempDir())
	if ExitCode(err) != ExitNoScore {
		t.Fatalf("exit %d (%v), want %d\n%s", ExitCode(err), err, ExitNoScore, printed)
	}
	if dialled != 1 || !strings.Contains(printed, "run 20261203-000000-abcdef -> "+out) {
		t.Errorf("dialled %d times; output:\n%s", dialled, printed)
	}
	var results []run.TrialResult
	readJSON(t, filepath.Join(out, "verdicts.json"), &results)
	if len(results) != 2 {
		t.Fatalf("%d trials in verdicts.json, want 2", len(results))
	}
	for _, r := range results {
		if r.Unreached != "wall_not_reached" {
			t.Errorf("%s: unreached %q (%s), want wall_not_reached", r.ID, r.Unreached, r.UnreachedWhy)
		}
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
