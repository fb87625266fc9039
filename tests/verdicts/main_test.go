// Package verdicts_test checks the verdict pipeline end to end on the embedded server: a
// population of reference-agent trials whose true verdicts are known by construction, the
// report in headless Chromium, and chaos diff.
package verdicts_test

import (
	"github.com/crashwall/chaos/tests/chaosbin"

	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/tests/testkit"
)

var (
	bin  string // the chaos binary
	root string // the repository
	// shared holds what outlives one test: the example run several tests read.
	shared string
)

func TestMain(m *testing.M) {
	root = chaosbin.Root()
	var cleanup func()
	var err error
	if bin, cleanup, err = chaosbin.Build(); err != nil {
		fmt.Fprintln(os.Stderr, "tests/verdicts:", err)
		os.Exit(2)
	}
	shared = filepath.Join(filepath.Dir(bin), "shared")
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// chaos runs the binary and returns its stdout, stderr and exit code.
func chaos(t testing.TB, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = root
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("chaos %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// runExample runs a spec on a fresh embedded server and returns the run folder.
func runExample(t testing.TB, spec string, extra ...string) string {
	t.Helper()
	return runExampleIn(t, t.TempDir(), spec, extra...)
}

// runExampleIn runs a spec with its data and run folder under dir.
func runExampleIn(t testing.TB, dir, spec string, extra ...string) string {
	t.Helper()
	out := filepath.Join(dir, "run")
	args := append([]string{"run", spec, "--data-dir", filepath.Join(dir, "data"), "--out", out}, extra...)
	stdout, stderr, code := chaos(t, args...)
	if code != 0 {
		t.Fatalf("chaos run exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	return out
}

func readResults(t testing.TB, dir string) []run.TrialResult {
	t.Helper()
	var rs []run.TrialResult
	testkit.ReadJSON(t, filepath.Join(dir, "verdicts.json"), &rs)
	return rs
}
