package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/crashwall/chaos/store"
	"github.com/crashwall/chaos/store/runfolder"
)

// importTimeout bounds writing one run: a database that stops answering must not hold
// the command forever.
const importTimeout = 2 * time.Minute

// RunsImportOptions are the inputs of `chaos runs import`.
type RunsImportOptions struct {
	IO      *IOStreams
	Dirs    []string
	Results ResultsFlags
	// Calls copies every trial's recorded calls too.
	Calls bool
}

// NewCmdRunsImport builds `chaos runs import RUN_DIR...`: run folders into the results
// database, for a run whose copy was not written (the database was down or went away).
func NewCmdRunsImport(ios *IOStreams) *cobra.Command {
	opts := &RunsImportOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "import RUN_DIR...",
		Short: "Copy run folders into the results database (a run the database missed)",
		Long: `chaos runs import writes run folders into the results database (--results-db or
` + store.EnvURL + `): the run, its trials and verdicts, a scheduled run's comparison with
the previous run (comparison.json), and with --calls every recorded call. It is what
Aggregate writes at the end of a run, with the same statements, one transaction per run,
so importing a run that is already there adds no row.

RUN_DIR is a run folder (it holds manifest.json and verdicts.json) or a folder of run
folders, such as chaos-runs/<spec>/ or chaos-runs/; its runs are imported oldest first.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dirs = args
			return runsImport(cmd.Context(), opts)
		},
	}
	addResultsFlags(cmd, &opts.Results, false)
	cmd.Flags().BoolVar(&opts.Calls, "calls", false, "copy every recorded call too (as --results-calls does for a run)")
	return cmd
}

func runsImport(ctx context.Context, opts *RunsImportOptions) error {
	if opts.Results.url() == "" {
		return badInput(fmt.Errorf("runs import: no results database to import into: give --results-db postgres://USER:PASSWORD@HOST:PORT/DATABASE or set %s", store.EnvURL))
	}
	host, _ := os.Hostname()
	var problems []error
	var runs []runfolder.Run
	seen := map[string]bool{} // a folder named twice (itself and its parent) is imported once
	for _, arg := range opts.Dirs {
		dirs, err := runfolder.Find(arg)
		if err != nil {
			problems = append(problems, fmt.Errorf("runs import: %w", err))
			continue
		}
		for _, dir := range dirs {
			r, err := runfolder.Read(dir, host)
			if err != nil {
				problems = append(problems, fmt.Errorf("runs import: %w", err))
				continue
			}
			if seen[r.Dir] {
				continue
			}
			seen[r.Dir] = true
			runs = append(runs, r)
		}
	}
	// Oldest first, so a later run of a schedule never lands before the one it was
	// compared with.
	sort.SliceStable(runs, func(i, j int) bool {
		if !runs[i].Row.Started.Equal(runs[j].Row.Started) {
			return runs[i].Row.Started.Before(runs[j].Row.Started)
		}
		return runs[i].Row.RunID < runs[j].Row.RunID
	})

	if len(runs) > 0 {
		if err := importRuns(ctx, opts, runs); err != nil {
			problems = append(problems, err)
		}
	}
	if len(problems) == 0 {
		return nil
	}
	// One line per problem: the last is the command's error, the others are printed
	// the way it will be.
	for _, p := range problems[:len(problems)-1] {
		fmt.Fprintln(opts.IO.ErrOut, "chaos: "+p.Error())
	}
	return badInput(problems[len(problems)-1])
}

// importRuns writes the runs in order; the first failure of the database stops it,
// since the runs after it would fail alike.
func importRuns(ctx context.Context, opts *RunsImportOptions, runs []runfolder.Run) error {
	db, err := openResults(ctx, opts.Results)
	if err != nil {
		var ee *ExitError
		if errors.As(err, &ee) {
			err = ee.Err
		}
		return fmt.Errorf("%w; nothing was imported", err)
	}
	defer db.Close()
	for i, r := range runs {
		var calls []store.Call
		if opts.Calls {
			calls = store.RecordedCalls(r.Dir, r.Results)
		}
		wctx, cancel := context.WithTimeout(ctx, importTimeout)
		got, err := db.ImportRun(wctx, r.Row, r.Results, calls, r.Comparison)
		cancel()
		if err != nil {
			msg := fmt.Sprintf("results database %s: could not import run %s from %s: %v; nothing of it was written", db.Where(), r.Row.RunID, r.Dir, err)
			if rest := len(runs) - i - 1; rest > 0 {
				msg += fmt.Sprintf(", nor of the %d run(s) after it", rest)
			}
			if i > 0 {
				msg += fmt.Sprintf(" (%d run(s) before it were imported)", i)
			}
			return errors.New(msg)
		}
		fmt.Fprintln(opts.IO.Out, importedLine(r, got, len(calls), opts.Calls))
	}
	return nil
}

// importedLine is the line printed for one imported run.
func importedLine(r runfolder.Run, got store.Imported, calls int, withCalls bool) string {
	n := len(r.Results)
	var b strings.Builder
	switch {
	case !got.Existed:
		fmt.Fprintf(&b, "imported %s: %d trials", r.Row.RunID, n)
	case got.TrialsBefore == n:
		fmt.Fprintf(&b, "already there %s: %d trials (rewritten from its folder, no trial added)", r.Row.RunID, n)
	default:
		fmt.Fprintf(&b, "imported %s: %d trials (it was there with %d)", r.Row.RunID, n, got.TrialsBefore)
	}
	if withCalls {
		fmt.Fprintf(&b, ", %d recorded calls", calls)
	}
	if cmp := r.Comparison; cmp != nil {
		if cmp.PreviousRunID == "" {
			fmt.Fprintf(&b, ", schedule %s (its first run)", cmp.Schedule)
		} else {
			fmt.Fprintf(&b, ", schedule %s compared with %s", cmp.Schedule, cmp.PreviousRunID)
			if cmp.Regressed() {
				b.WriteString(" (REGRESSION)")
			}
		}
	}
	return b.String()
}
