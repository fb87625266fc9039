package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/store"
)

// ShowOptions are the inputs of `chaos show`.
type ShowOptions struct {
	IO      *IOStreams
	Run     string
	Results ResultsFlags
	// RunsDir is where run folders are looked for by id (default chaos-runs).
	RunsDir string
}

// NewCmdShow builds `chaos show RUN`.
func NewCmdShow(ios *IOStreams) *cobra.Command {
	opts := &ShowOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "show RUN",
		Short: "Show one run: per condition the silent-wrong rate, and how a scheduled run compared with the previous one",
		Long: `chaos show reads a run from the results database when one is configured (--results-db or
` + store.EnvURL + `), else from its run folder: RUN is a folder, or a run id looked for
under chaos-runs/<spec>/. Per cell and condition it prints the silent-wrong rate (k/n and
its 80% interval) and the trials left out of it; a scheduled run also shows its comparison
with the previous run of its schedule, regressions marked.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Run = args[0]
			return showRun(cmd.Context(), opts)
		},
	}
	addResultsFlags(cmd, &opts.Results, false)
	cmd.Flags().StringVar(&opts.RunsDir, "runs-dir", "chaos-runs", "where run folders are looked for by run id")
	return cmd
}

// shownRun is a run as show prints it, from either source.
type shownRun struct {
	run      *report.Run
	host     string
	schedule string
	previous string
	cmp      []report.DiffRow
	note     string
	source   string
}

func showRun(ctx context.Context, opts *ShowOptions) error {
	r, err := findRun(ctx, opts)
	if err != nil {
		return err
	}
	out := opts.IO.Out
	m := r.run.Manifest
	fmt.Fprintf(out, "run      %s   (from %s)\n", m.RunID, r.source)
	fmt.Fprintf(out, "spec     %s\n", m.Spec.Name)
	// The manifest keeps the plan line as chaos run printed it ("plan 38 trials of ...").
	fmt.Fprintf(out, "plan     %s\n", strings.TrimPrefix(m.Plan, "plan "))
	if started, err := time.Parse(time.RFC3339Nano, m.Started); err == nil {
		line := started.Local().Format("2006-01-02 15:04:05")
		if ended, err := time.Parse(time.RFC3339Nano, m.Ended); err == nil && ended.After(started) {
			line += fmt.Sprintf(", took %s", ended.Sub(started).Round(time.Second))
		}
		fmt.Fprintf(out, "started  %s\n", line)
	}
	folder := r.run.Dir
	if r.host != "" {
		folder += " (on " + r.host + ")"
	}
	fmt.Fprintf(out, "folder   %s\n", folder)
	if m.Aborted != "" {
		fmt.Fprintf(out, "aborted  %s\n", m.Aborted)
	}

	entries := make([]report.Entry, 0, len(r.run.Results))
	for _, t := range r.run.Results {
		entries = append(entries, report.Entry{Trial: t, Arm: t.Cell, Key: t.ID})
	}
	mx := report.NewMatrix(entries, m.Conditions)
	cmpOf := map[[2]string]report.DiffRow{}
	for _, d := range r.cmp {
		cmpOf[[2]string{d.Cell, d.Condition}] = d
	}
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	head := "CELL\tCONDITION\tSILENT WRONG (k/n, 80% interval)\tNOT SCORED"
	if len(r.cmp) > 0 {
		head += "\tVS PREVIOUS"
	}
	fmt.Fprintln(tw, head)
	for _, cond := range append(append([]string(nil), mx.Possible...), mx.Impossible...) {
		for _, arm := range mx.Arms {
			c := mx.Cells[cond][arm]
			if c == nil {
				continue
			}
			line := fmt.Sprintf("%s\t%s\t%s\t%s", arm, cond, c.SilentWrong, excluded(c.Excluded))
			if len(r.cmp) > 0 {
				vs := "-"
				if d, ok := cmpOf[[2]string{arm, cond}]; ok {
					vs = fmt.Sprintf("%s (was %s, p %s)", d.Call, d.A, report.FormatP(d.P))
					if d.Call == "worse" {
						vs = "REGRESSION: " + vs
					}
				}
				line += "\t" + vs
			}
			fmt.Fprintln(tw, line)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, l := range report.ReviewedLines(r.run.Results, m.Conditions) {
		fmt.Fprintln(out, "reviewer: "+l)
	}
	if cells, total := report.Costs(r.run.Results); cells != nil {
		fmt.Fprintln(out, "\ncost")
		for _, c := range cells {
			fmt.Fprintf(out, "  %s: %s\n", c.Cell, c.CostLine())
		}
		fmt.Fprintf(out, "  run: %s\n", total.CostLine())
	}
	if r.schedule != "" || r.previous != "" || r.note != "" {
		fmt.Fprintln(out)
		regressions := 0
		for _, d := range r.cmp {
			if d.Call == "worse" {
				regressions++
			}
		}
		switch {
		case r.previous == "":
			fmt.Fprintf(out, "schedule %s: the first run, nothing to compare with\n", r.schedule)
		case regressions > 0:
			fmt.Fprintf(out, "schedule %s: REGRESSION against %s in %d condition(s)\n", r.schedule, r.previous, regressions)
		default:
			fmt.Fprintf(out, "schedule %s: no regression against %s\n", r.schedule, r.previous)
		}
		if r.note != "" {
			fmt.Fprintln(out, r.note)
		}
	}
	return nil
}

func excluded(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	var parts []string
	for k, v := range m {
		parts = append(parts, fmt.Sprintf("%s %d", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// findRun reads RUN from the results database when configured, else from a folder.
func findRun(ctx context.Context, opts *ShowOptions) (*shownRun, error) {
	if fi, err := os.Stat(opts.Run); err == nil && fi.IsDir() {
		return runFromFolder(opts.Run)
	}
	db, err := openResults(ctx, opts.Results)
	if err != nil {
		return nil, err
	}
	if db != nil {
		defer db.Close()
		rep, row, err := db.LoadRun(ctx, opts.Run)
		if errors.Is(err, store.ErrNoRun) {
			return nil, badInput(fmt.Errorf("run %s is not in the results database %s (chaos runs lists what is)", opts.Run, db.Where()))
		}
		if err != nil {
			return nil, err
		}
		cmp, err := db.Comparisons(ctx, opts.Run)
		if err != nil {
			return nil, err
		}
		return &shownRun{run: rep, host: row.Host, schedule: row.Schedule, previous: row.PreviousRunID, cmp: cmp, source: "the results database " + db.Where()}, nil
	}
	matches, _ := filepath.Glob(filepath.Join(opts.RunsDir, "*", opts.Run))
	if len(matches) == 0 {
		return nil, badInput(fmt.Errorf("no run %s: not a folder, not under %s/<spec>/, and no results database is configured (--results-db or %s)", opts.Run, opts.RunsDir, store.EnvURL))
	}
	return runFromFolder(matches[0])
}

func runFromFolder(dir string) (*shownRun, error) {
	rep, err := report.LoadRun(dir)
	if err != nil {
		return nil, badInput(err)
	}
	r := &shownRun{run: rep, source: "its folder"}
	// A scheduled run's folder holds its comparison with the previous run.
	if b, err := os.ReadFile(filepath.Join(dir, "comparison.json")); err == nil {
		var c struct {
			Schedule      string           `json:"schedule"`
			PreviousRunID string           `json:"previous_run_id"`
			Rows          []report.DiffRow `json:"rows"`
			Note          string           `json:"note"`
		}
		if json.Unmarshal(b, &c) == nil {
			r.schedule, r.previous, r.cmp, r.note = c.Schedule, c.PreviousRunID, c.Rows, c.Note
		}
	}
	return r, nil
}
