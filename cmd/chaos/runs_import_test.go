package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestRunsImportNeedsADatabase: with no database named, import says how to name one.
func TestRunsImportNeedsADatabase(t *testing.T) {
	t.Setenv("CHAOS_DATABASE_URL", "")
	var out bytes.Buffer
	err := runsImport(t.Context(), &RunsImportOptions{IO: &IOStreams{Out: &out, ErrOut: &out}, Dirs: []string{t.TempDir()}})
	if ExitCode(err) != ExitBadInput || !strings.Contains(err.Error(), "no results database to import into: give --results-db") {
		t.Errorf("err %v (exit %d)", err, ExitCode(err))
	}
}
