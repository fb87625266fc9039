package activities

import (
	"errors"
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

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

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

// newActivities returns activities with a work root of the test's own, registered in a
// fresh test activity environment.
func newActivities(t testing.TB) (*Activities, *testsuite.TestActivityEnvironment) {
	t.Helper()
	a := &Activities{ChaosBin: chaosBin, WorkRoot: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	env := (&testsuite.WorkflowTestSuite{}).NewTestActivityEnvironment()
	env.RegisterActivity(a)
	return a, env
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

// execute runs an activity in env and decodes its result.
func execute[T any](t testing.TB, env *testsuite.TestActivityEnvironment, fn, in any) (T, error) {
	t.Helper()
	var out T
	v, err := env.ExecuteActivity(fn, in)
	if err != nil {
		return out, err
	}
	if err := v.Get(&out); err != nil {
		t.Fatalf("decode the result: %v", err)
	}
	return out, nil
}

// must is execute for activities that should succeed.
func must[T any](t testing.TB, env *testsuite.TestActivityEnvironment, fn, in any) T {
	t.Helper()
	out, err := execute[T](t, env, fn, in)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// wantBadInput checks err is a non-retryable bad-input failure that says want.
func wantBadInput(t testing.TB, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one saying %q", want)
	}
	var app *temporal.ApplicationError
	if !errors.As(err, &app) {
		t.Fatalf("error %v is not an application error", err)
	}
	if !app.NonRetryable() || app.Type() != ErrBadInput {
		t.Errorf("error %v: non-retryable=%v type=%q; want non-retryable %q", err, app.NonRetryable(), app.Type(), ErrBadInput)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
}

// agentInput is RunAgent's input for the command in a trial of the spec, with
// sandbox and trial folder of the test's own.
func agentInput(t *testing.T, yaml []byte, command string) run.AgentInput {
	t.Helper()
	in := trialInput(t, yaml, examplePath, "clean", "")
	return run.AgentInput{
		Trial:     in,
		Workspace: run.Workspace{Dir: t.TempDir(), TrialDir: t.TempDir()},
		Hub:       run.HubInfo{URL: "http://127.0.0.1:9", Command: command},
	}
}
