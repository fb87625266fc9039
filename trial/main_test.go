package trial

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crashwall/chaos/tests/chaosbin"
	"github.com/crashwall/chaos/tests/fixture"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
)

// chaosBin is the chaos binary built once for the tests: the trials' {wall} and the
// reference agent.
var chaosBin string

func TestMain(m *testing.M) {
	bin, cleanup, err := chaosbin.Build()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	chaosBin = bin
	code := m.Run()
	cleanup()
	os.Exit(code)
}

const examplePath = "../examples/support-ticket.yaml"

// exampleYAML is the support-ticket example, with edits applied (old, new pairs).
func exampleYAML(t testing.TB, edits ...string) []byte {
	return fixture.EditedFile(t, examplePath, edits...)
}

// newHost returns a host with a work root of the test's own, and the context its
// steps run in (testEnv).
func newHost(t testing.TB) (*Host, *testEnv) {
	t.Helper()
	h := &Host{ChaosBin: chaosBin, WorkRoot: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	return h, &testEnv{ctx: context.Background()}
}

// testEnv is the context a test runs a trial's steps in (a test may cancel it).
type testEnv struct{ ctx context.Context }

// ExecuteActivity runs a step that returns only an error (Teardown).
func (e *testEnv) ExecuteActivity(fn func(context.Context, run.TeardownInput) error, in run.TeardownInput) (struct{}, error) {
	return struct{}{}, fn(e.ctx, in)
}

// trialInput is the input of the first trial of a plan of the spec under one condition.
func trialInput(t testing.TB, yaml []byte, specPath, condition, agentCommand string) run.TrialInput {
	t.Helper()
	return cellTrialInput(t, yaml, specPath, condition, agentCommand, "")
}

// cellTrialInput is the input of the first trial of the cell ("": the plan's first cell)
// of a plan of the spec under one condition.
func cellTrialInput(t testing.TB, yaml []byte, specPath, condition, agentCommand, cell string) run.TrialInput {
	t.Helper()
	abs, err := filepath.Abs(specPath)
	if err != nil {
		t.Fatal(err)
	}
	s, err := spec.Parse(abs, yaml)
	if err != nil {
		t.Fatal(err)
	}
	p, err := spec.NewPlan(s, []string{condition}, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	trial := p.Trials[0]
	if cell != "" {
		i := slices.IndexFunc(p.Trials, func(tp spec.TrialPlan) bool { return tp.Cell == cell })
		if i < 0 {
			t.Fatalf("the plan has no cell %q (cells %v)", cell, p.Cells)
		}
		trial = p.Trials[i]
	}
	return run.TrialInput{
		RunID: "test-run", OutDir: t.TempDir(),
		Spec:  run.SpecRef{Name: s.Name, Path: abs, YAML: yaml},
		Trial: trial, AgentCommand: agentCommand,
	}
}

// execute runs a step in env.
func execute[T, I any](t testing.TB, env *testEnv, fn func(context.Context, I) (T, error), in I) (T, error) {
	t.Helper()
	return fn(env.ctx, in)
}

// must is execute for steps that should succeed.
func must[T, I any](t testing.TB, env *testEnv, fn func(context.Context, I) (T, error), in I) T {
	t.Helper()
	out, err := execute[T](t, env, fn, in)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// wantBadInput checks err is a failure no retry can fix (IsBadInput) that says want.
func wantBadInput(t testing.TB, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one saying %q", want)
	}
	if !IsBadInput(err) {
		t.Errorf("error %v is not bad input", err)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
}
