package main

import (
	"os"
	"strings"
	"testing"

	"github.com/crashwall/chaos/store"
)

// TestRunOnTemporalRefusesResultsFlags: chaos run --temporal sends the run to a cluster
// whose workers write results with their own setting, so --results-db or --results-calls
// there is refused with exit 1 and one line saying where the setting goes;
// CHAOS_DATABASE_URL in the environment alone is no mistake.
func TestRunOnTemporalRefusesResultsFlags(t *testing.T) {
	const dbURL = "postgres://chaos:hunter2@db.example.com:5432/chaos_results"
	execute := func(args ...string) (string, error) {
		// --dry-run: the plan is printed and nothing is reached.
		return chaosCmd(t, append([]string{"run", exampleSpec, "--dry-run", "--data-dir", t.TempDir()}, args...)...)
	}
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"--results-db", []string{"--results-db", dbURL}},
		{"--results-calls", []string{"--results-calls"}},
		{"both", []string{"--results-db", dbURL, "--results-calls"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := execute(append([]string{"--temporal", "127.0.0.1:7233"}, tc.flags...)...)
			if ExitCode(err) != ExitBadInput {
				t.Fatalf("error %v (exit %d), want exit 1", err, ExitCode(err))
			}
			msg := err.Error()
			for _, want := range []string{"the results database is set on the worker", "chaos server --results-db", "chaos worker --results-db", "not on chaos run --temporal"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q lacks %q", msg, want)
				}
			}
			if strings.Contains(msg, "\n") || strings.Contains(msg, "hunter2") {
				t.Errorf("error %q: want one line without the password", msg)
			}
		})
	}

	t.Run("the environment alone", func(t *testing.T) {
		t.Setenv(store.EnvURL, dbURL)
		if out, err := execute("--temporal", "127.0.0.1:7233"); err != nil {
			t.Errorf("error %v (exit %d), want none: %s is not a flag given to chaos run\n%s", err, ExitCode(err), store.EnvURL, out)
		}
	})
	t.Run("a chaos server running on the data directory", func(t *testing.T) {
		// This test process stands in for the server: server.json names a live pid.
		dir := t.TempDir()
		if err := writeServerFile(dir, serverAddrs{Frontend: "127.0.0.1:7233", PID: os.Getpid()}); err != nil {
			t.Fatal(err)
		}
		_, err := chaosCmd(t, "run", exampleSpec, "--dry-run", "--data-dir", dir, "--results-db", dbURL)
		if ExitCode(err) != ExitBadInput || !strings.Contains(err.Error(), "a chaos server is running on "+dir) ||
			!strings.Contains(err.Error(), "give --results-db to chaos server") || strings.Contains(err.Error(), "hunter2") {
			t.Fatalf("error %v (exit %d), want exit 1 naming the running server and where the setting goes, without the password", err, ExitCode(err))
		}
	})
	t.Run("without --temporal", func(t *testing.T) {
		if out, err := execute("--results-db", dbURL, "--results-calls"); err != nil {
			t.Errorf("error %v (exit %d), want none: the embedded worker writes the results\n%s", err, ExitCode(err), out)
		}
	})
}
