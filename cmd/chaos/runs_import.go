package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/store"
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

// folderRun is a run read from its folder, ready to import.
type folderRun struct {
	dir     string
	row     store.RunRow
	results []run.TrialResult
	cmp     *store.Comparison
}

func runsImport(ctx context.Context, opts *RunsImportOptions) error {
	if opts.Results.url() == "" {
		return badInput(fmt.Errorf("runs import: no results database to import into: give --results-db postgres://USER:PASSWORD@HOST:PORT/DATABASE or set %s", store.EnvURL))
	}
	host, _ := os.Hostname()
	var problems []error
	var runs []folderRun
	seen := map[string]bool{} // a folder named twice (itself and its parent) is imported once
	for _, arg := range opts.Dirs {
		dirs, err := runFolders(arg)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		for _, dir := range dirs {
			r, err := readRunFolder(dir, host)
			if err != nil {
				problems = append(problems, err)
				continue
			}
			if seen[r.dir] {
				continue
			}
			seen[r.dir] = true
			runs = append(runs, r)
		}
	}
	// Oldest first, so a later run of a schedule never lands before the one it was
	// compared with.
	sort.SliceStable(runs, func(i, j int) bool {
		if !runs[i].row.Started.Equal(runs[j].row.Started) {
			return runs[i].row.Started.Before(runs[j].row.Started)
		}
		return runs[i].row.RunID < runs[j].row.RunID
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
func importRuns(ctx context.Context, opts *RunsImportOptions, runs []folderRun) error {
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
			calls = store.RecordedCalls(r.dir, r.results)
		}
		wctx, cancel := context.WithTimeout(ctx, importTimeout)
		got, err := db.ImportRun(wctx, r.row, r.results, calls, r.cmp)
		cancel()
		if err != nil {
			msg := fmt.Sprintf("results database %s: could not import run %s from %s: %v; nothing of it was written", db.Where(), r.row.RunID, r.dir, err)
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
func importedLine(r folderRun, got store.Imported, calls int, withCalls bool) string {
	n := len(r.results)
	var b strings.Builder
	switch {
	case !got.Existed:
		fmt.Fprintf(&b, "imported %s: %d trials", r.row.RunID, n)
	case got.TrialsBefore == n:
		fmt.Fprintf(&b, "already there %s: %d trials (rewritten from its folder, no trial added)", r.row.RunID, n)
	default:
		fmt.Fprintf(&b, "imported %s: %d trials (it was there with %d)", r.row.RunID, n, got.TrialsBefore)
	}
	if withCalls {
		fmt.Fprintf(&b, ", %d recorded calls", calls)
	}
	if r.cmp != nil {
		if r.cmp.PreviousRunID == "" {
			fmt.Fprintf(&b, ", schedule %s (its first run)", r.cmp.Schedule)
		} else {
			fmt.Fprintf(&b, ", schedule %s compared with %s", r.cmp.Schedule, r.cmp.PreviousRunID)
			if r.cmp.Regressed() {
				b.WriteString(" (REGRESSION)")
			}
		}
	}
	return b.String()
}

// runFolders resolves an argument to run folders: the folder itself when it holds
// manifest.json, else the run folders in it (chaos-runs/<spec>/), else those one level
// further down (chaos-runs/).
func runFolders(arg string) ([]string, error) {
	fi, err := os.Stat(arg)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("runs import: %s does not exist (give a run folder, such as chaos-runs/<spec>/<run id>, or a folder of them)", arg)
		}
		return nil, fmt.Errorf("runs import: %s: %v", arg, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("runs import: %s is not a run folder: it is a file (give the folder that holds manifest.json and verdicts.json)", arg)
	}
	if isRunFolder(arg) {
		return []string{arg}, nil
	}
	for _, pattern := range []string{filepath.Join(arg, "*"), filepath.Join(arg, "*", "*")} {
		matches, err := filepath.Glob(pattern)
		if err != nil {
			return nil, fmt.Errorf("runs import: %s: %v", arg, err)
		}
		var dirs []string
		for _, m := range matches {
			if isRunFolder(m) {
				dirs = append(dirs, m)
			}
		}
		if len(dirs) > 0 {
			return dirs, nil
		}
	}
	return nil, fmt.Errorf("runs import: %s is not a run folder: it has no manifest.json, and no run folder is in it (a run that never ended has none; give the folder chaos run wrote, or a folder of them)", arg)
}

func isRunFolder(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, "manifest.json"))
	return err == nil && fi.Mode().IsRegular()
}

// readRunFolder reads a run folder with the reader chaos show and report use
// (report.LoadRun), and its comparison.json when a schedule ran it.
func readRunFolder(dir, host string) (folderRun, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return folderRun{}, fmt.Errorf("runs import: %s: %v", dir, err)
	}
	damaged := func(err error) error {
		return fmt.Errorf("runs import: run folder %s is damaged: %v; nothing of it was imported (restore the file, or leave this folder out)", dir, err)
	}
	rep, err := report.LoadRun(abs)
	if err != nil {
		if _, statErr := os.Stat(filepath.Join(abs, "verdicts.json")); errors.Is(statErr, fs.ErrNotExist) {
			return folderRun{}, fmt.Errorf("runs import: run folder %s is incomplete: it has manifest.json but no verdicts.json; nothing of it was imported", dir)
		}
		// LoadRun's error names the folder; its inner one names the file and what is wrong.
		if inner := errors.Unwrap(err); inner != nil {
			err = inner
		}
		return folderRun{}, damaged(err)
	}
	row, err := store.RunRowOf(rep, host)
	if err != nil {
		return folderRun{}, damaged(err)
	}
	r := folderRun{dir: abs, row: row, results: rep.Results}
	cmp, err := readComparison(abs)
	if err != nil {
		return folderRun{}, damaged(err)
	}
	if cmp != nil {
		cmp.RunID = row.RunID
		r.cmp = cmp
	}
	return r, nil
}

// readComparison reads comparison.json, which CompareScheduledRun writes into a
// scheduled run's folder (nil: the run was not scheduled).
func readComparison(dir string) (*store.Comparison, error) {
	b, err := os.ReadFile(filepath.Join(dir, "comparison.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var c struct {
		Schedule      string           `json:"schedule"`
		PreviousRunID string           `json:"previous_run_id"`
		Rows          []report.DiffRow `json:"rows"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("comparison.json: %v", err)
	}
	if c.Schedule == "" {
		return nil, fmt.Errorf("comparison.json names no schedule")
	}
	cmp := &store.Comparison{Schedule: c.Schedule, PreviousRunID: c.PreviousRunID}
	for _, r := range c.Rows {
		// The comparisons table holds the silent-wrong rate per cell and condition; a row
		// of a declared outcome (chaos diff's) has no place there.
		if r.Outcome == "" {
			cmp.Rows = append(cmp.Rows, r)
		}
	}
	return cmp, nil
}
