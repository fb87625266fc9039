package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/crashwall/chaos/examples"
)

// TestRunChecksAgentEnv: agent.env's ${VAR}s are filled in where the agent starts; an
// unset one is caught when the run is planned (exit 1, naming the key and the variable),
// and a set one passes without its value being printed.
func TestRunChecksAgentEnv(t *testing.T) {
	b, err := os.ReadFile(exampleSpec)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(b), "  timeout: 60s\n", "  timeout: 60s\n  env: {OPENAI_API_KEY: '${CHAOS_TEST_AGENT_KEY}'}\n", 1)
	if text == string(b) {
		t.Fatal("the example has no agent timeout line to add env after")
	}
	path := filepath.Join(t.TempDir(), "spec.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	execute := func() (string, error) {
		return chaosCmd(t, "run", path, "--dry-run", "--data-dir", t.TempDir())
	}

	t.Setenv("CHAOS_TEST_AGENT_KEY", "") // restored after the test
	os.Unsetenv("CHAOS_TEST_AGENT_KEY")
	_, err = execute()
	line := strings.Count(text[:strings.Index(text, "  env: {OPENAI_API_KEY")], "\n") + 1
	want := fmt.Sprintf("%s:%d: agent.env OPENAI_API_KEY: the environment variable CHAOS_TEST_AGENT_KEY is not set", path, line)
	if ExitCode(err) != ExitBadInput || err.Error() != want {
		t.Errorf("error %v (exit %d), want exit 1 and %q", err, ExitCode(err), want)
	}

	t.Setenv("CHAOS_TEST_AGENT_KEY", "sk-test-77c2")
	out, err := execute()
	if err != nil {
		t.Fatalf("with the variable set: error %v\n%s", err, out)
	}
	if strings.Contains(out, "sk-test-77c2") {
		t.Errorf("the plan printed the variable's value:\n%s", out)
	}
}

// The run flags take the ranges and messages of the spec's keys, and no flag plans a run
// too large to hold: --reps 1000000000 is refused before a trial is planned.
func TestRunFlagBounds(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--reps", "1000000000"}, "--reps must be at most 10000, got 1000000000"},
		{[]string{"--reps", "-3"}, "--reps must be at least 1, got -3"},
		{[]string{"--concurrency", "-1"}, "--concurrency must be 0 or more, got -1"},
		{[]string{"--concurrency", "3000000000"}, "--concurrency is too large: 3000000000"},
		{[]string{"--reps", "10000"}, "the run would have 380000 trials (2 cells x 19 conditions x 10000 replicates); a run has at most 10000"},
		// 2 cells x 19 conditions x 10 replicates = 380 trials, 300 at once under a budget.
		{[]string{"--reps", "10", "--concurrency", "300", "--budget", "5"}, "--budget runs at most 200 trials at once (each trial starts only where every running trial's spending is known), and this run asks for 300: lower --concurrency to 200, or run without --budget"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out bytes.Buffer
			root := NewCmdRoot(&IOStreams{Out: &out, ErrOut: &out})
			root.SetArgs(append([]string{"run", exampleSpec, "--dry-run", "--data-dir", t.TempDir()}, tt.args...))
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := root.Execute()
			runtime.ReadMemStats(&after)
			if ExitCode(err) != ExitBadInput || err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v (exit %d); want exit 1 with %q\n%s", err, ExitCode(err), tt.want, out.String())
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
				t.Errorf("refusing the flags allocated %d MB", grew>>20)
			}
		})
	}
}

// TestRunProfileFlag: --profile takes the place of the spec's agent.profile, which is what
// Verify reads the closing message by (run.SpecRef.Profile); an unknown one is bad input
// naming the profiles there are.
func TestRunProfileFlag(t *testing.T) {
	tests := []struct {
		profile string
		code    int
		want    string // in the error
	}{
		{"claude-code", ExitOK, ""},
		{"codex", ExitOK, ""},
		{"claude", ExitBadInput, `unknown --profile "claude" (known: generic, claude-code, codex, goose, scripted)`},
	}
	for _, tt := range tests {
		t.Run(tt.profile, func(t *testing.T) {
			opts := &RunOptions{IO: &IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, Spec: exampleSpec, Profile: tt.profile}
			s, _, _, err := planSpec(opts)
			if ExitCode(err) != tt.code || (tt.want != "" && !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("error %v (exit %d), want exit %d with %q", err, ExitCode(err), tt.code, tt.want)
			}
			if err == nil && s.Agent.Profile != tt.profile {
				t.Errorf("agent.profile %q, want %q", s.Agent.Profile, tt.profile)
			}
		})
	}
}

// TestDemoOptions: demo is run of the embedded example with run's meaning of --out (the
// run folder itself) and, without it, a folder per run id under chaos-runs/demo.
func TestDemoOptions(t *testing.T) {
	tests := []struct {
		name         string
		args         []string
		out, runsDir string
	}{
		{"default", nil, "", filepath.Join("chaos-runs", "demo")},
		{"--out", []string{"--out", "/tmp/x/mine"}, "/tmp/x/mine", filepath.Join("chaos-runs", "demo")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got *RunOptions
			cmd := NewCmdDemo(&IOStreams{Out: io.Discard, ErrOut: io.Discard}, func(_ context.Context, o *RunOptions) error { got = o; return nil })
			cmd.SetArgs(tc.args)
			if err := cmd.Execute(); err != nil {
				t.Fatal(err)
			}
			if got.Out != tc.out || got.RunsDir != tc.runsDir {
				t.Errorf("out %q, runs dir %q; want %q, %q", got.Out, got.RunsDir, tc.out, tc.runsDir)
			}
			if !bytes.Equal(got.SpecData, examples.SupportTicket) {
				t.Error("demo does not run the embedded example")
			}
		})
	}
}

// TestRunChecksAgentProgram: a run whose agent program cannot be found where its trials
// will look is refused at plan time (exit 1, naming it and where it was looked for), and
// --dry-run shows each cell's agent command filled in.
func TestRunChecksAgentProgram(t *testing.T) {
	tests := []struct {
		name  string
		agent []string
		code  int
		want  string
	}{
		{"missing on PATH", []string{"chaos-no-such-agent", "-p", "{task}"}, ExitBadInput, "cell agent=blind: the agent's program chaos-no-such-agent is not on PATH ("},
		{"relative", []string{"./my-agent", "{task}"}, ExitBadInput, "cell agent=blind: the agent's program ./my-agent is looked for in the trial's sandbox"},
		{"found", []string{"echo", "{task}"}, 0, "\nagent agent=blind (sh -c): echo \"$CHAOS_TASK\"\n  CHAOS_TASK='Read the customer'\\''s email about ticket T-4821"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := chaosCmd(t, append([]string{"run", exampleSpec, "--dry-run", "--data-dir", t.TempDir(), "--"}, tc.agent...)...)
			if ExitCode(err) != tc.code {
				t.Fatalf("exit %d (%v), want %d\n%s", ExitCode(err), err, tc.code, out)
			}
			got := out
			if err != nil {
				got = err.Error()
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("got:\n%s\nwant it to contain %q", got, tc.want)
			}
		})
	}
}
