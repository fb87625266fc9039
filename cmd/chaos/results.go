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
	cmd.Flags().StringVar(&f.URL, "results-db", "", "PostgreSQL URL of the results database (default $"+store.EnvURL+"; none: run folders only)")
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
