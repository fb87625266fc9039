package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunOutHoldsAnotherRun: --out into a folder that holds another run (its
// manifest.json) is refused when the run is planned, exit 1, with a sentence that names
// the run; an empty folder is taken.
func TestRunOutHoldsAnotherRun(t *testing.T) {
	dir := t.TempDir()
	run := func() (string, error) {
		var out bytes.Buffer
		root := NewCmdRoot(&IOStreams{Out: &out, ErrOut: &out})
		root.SetArgs([]string{"run", exampleSpec, "--out", dir, "--dry-run", "--data-dir", t.TempDir(), "--", "true"})
		err := root.Execute()
		return out.String(), err
	}
	if out, err := run(); err != nil {
		t.Fatalf("an empty --out folder: %v\n%s", err, out)
	}
	os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(`{"run_id": "20261202-101010-abcdef"}`), 0o644)
	out, err := run()
	want := "--out " + dir + " holds run 20261202-101010-abcdef (its manifest.json): give --out a new folder, or remove that one first"
	if ExitCode(err) != ExitBadInput || err == nil || err.Error() != want {
		t.Errorf("--out into another run's folder: exit %d, %v; want exit %d, %q\n%s", ExitCode(err), err, ExitBadInput, want, out)
	}
	if strings.Contains(out, "plan ") {
		t.Errorf("the refused run printed a plan:\n%s", out)
	}
}
