package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/crashwall/chaos/store"
)

// ResultsFlags name the results database: where runs are copied to (run, server, worker)
// and read from (runs, show, trend).
type ResultsFlags struct {
	URL string
	// Calls copies every recorded call too (writers only).
	Calls bool
}

// addResultsFlags adds --results-db, and --results-calls to commands whose worker writes.
func addResultsFlags(cmd *cobra.Command, f *ResultsFlags, writes bool) {
	cmd.Flags().StringVar(&f.URL, "results-db", "", "PostgreSQL URL of the results database (default $"+store.EnvURL+"; none: run folders only); its password as ${VAR}, PGPASSWORD or PGPASSFILE")
	if writes {
		cmd.Flags().BoolVar(&f.Calls, "results-calls", false, "copy every recorded call to the results database too")
	}
}

// url is the results database's URL: the flag, else the environment, else "".
func (f ResultsFlags) url() string {
	if f.URL != "" {
		return f.URL
	}
	return os.Getenv(store.EnvURL)
}

// openResults opens the results database when one is configured (nil, nil when not). Any
// failure is the user's to fix (exit 1) and reads as one line: a refused connection, a
// wrong password, a schema newer than this chaos.
func openResults(ctx context.Context, f ResultsFlags) (*store.Store, error) {
	u := f.url()
	if u == "" {
		return nil, nil
	}
	s, err := store.Open(ctx, u)
	if err != nil {
		return nil, badInput(fmt.Errorf("results database: %w", err))
	}
	return s, nil
}

// checkResultsOnTemporal refuses --results-db and --results-calls on a chaos run that
// --temporal sends to a cluster: its workers copy runs with their own setting, and
// passing the URL along in the workflow's input would write its password into Temporal's
// history. $CHAOS_DATABASE_URL alone is no mistake (it is there for chaos runs and show):
// such a run does not use it.
//
// The same holds for a chaos server found running on the data directory, which chaos run
// submits to as it would to --temporal: its worker copies the run, with the server's
// setting.
func checkResultsOnTemporal(cmd *cobra.Command, f TemporalFlags) error {
	given := ""
	for _, name := range []string{"results-db", "results-calls"} {
		if cmd.Flags().Changed(name) {
			given = name
			break
		}
	}
	if given == "" {
		return nil
	}
	if f.Address != "" {
		return badInput(fmt.Errorf("--%s: with --temporal the results database is set on the worker (chaos server --results-db, chaos worker --results-db), not on chaos run --temporal; leave out --%s", given, given))
	}
	dir, err := dataDir(f)
	if err != nil {
		return nil // connect says what is wrong with the data directory
	}
	if a, ok := runningServer(dir); ok {
		return badInput(fmt.Errorf("--%s: a chaos server is running on %s (pid %d) and this run goes to it; its worker copies runs with its own setting: give --%s to chaos server, or stop it so that chaos run starts its own with --%s", given, dir, a.PID, given, given))
	}
	return nil
}
