package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/crashwall/chaos/store"
)

// TrendOptions are the inputs of `chaos trend`.
type TrendOptions struct {
	IO      *IOStreams
	Spec    string
	Last    int
	Results ResultsFlags
}

// NewCmdTrend builds `chaos trend SPEC-NAME`.
func NewCmdTrend(ios *IOStreams) *cobra.Command {
	opts := &TrendOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "trend SPEC-NAME [--last N]",
		Short: "The silent-wrong rate per condition over a spec's last runs (from the results database)",
		Long: `chaos trend reads the last runs of a spec from the results database (--results-db or
` + store.EnvURL + `) and prints, per cell and condition, each run's silent-wrong rate:
silent wrong over scored trials, as k/n with its 80% Wilson interval, oldest run first.
A run that a schedule found significantly worse than the one before it is marked.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Spec = args[0]
			return trendRun(cmd.Context(), opts)
		},
	}
	addResultsFlags(cmd, &opts.Results, false)
	cmd.Flags().IntVar(&opts.Last, "last", 10, "how many runs, the newest")
	return cmd
}

func trendRun(ctx context.Context, opts *TrendOptions) error {
	if opts.Last <= 0 {
		return badInput(errors.New("--last must be at least 1"))
	}
	db, err := openResults(ctx, opts.Results)
	if err != nil {
		return err
	}
	if db == nil {
		return badInput(fmt.Errorf("chaos trend reads the results database: give --results-db URL or set %s", store.EnvURL))
	}
	defer db.Close()
	runs, err := db.Trend(ctx, opts.Spec, opts.Last)
	if err != nil {
		return err
	}
	if len(runs) == 0 {
		return badInput(fmt.Errorf("the results database %s has no runs of spec %q", db.Where(), opts.Spec))
	}

	// Regressions a schedule found, to mark them on their rows.
	worse := map[string]map[store.TrendKey]bool{}
	for _, r := range runs {
		if !r.Run.Regressed {
			continue
		}
		rows, err := db.Comparisons(ctx, r.Run.RunID)
		if err != nil {
			return err
		}
		worse[r.Run.RunID] = map[store.TrendKey]bool{}
		for _, d := range rows {
			if d.Call == "worse" {
				worse[r.Run.RunID][store.TrendKey{Cell: d.Cell, Condition: d.Condition}] = true
			}
		}
	}

	var keys []store.TrendKey
	seen := map[store.TrendKey]bool{}
	order := map[string]int{}
	for _, r := range runs {
		for i, c := range r.Run.Conditions {
			if _, ok := order[c]; !ok {
				order[c] = i
			}
		}
		for k := range r.Rates {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Cell != keys[j].Cell {
			return keys[i].Cell < keys[j].Cell
		}
		oi, iok := order[keys[i].Condition]
		oj, jok := order[keys[j].Condition]
		if iok && jok && oi != oj {
			return oi < oj
		}
		return keys[i].Condition < keys[j].Condition
	})

	out := opts.IO.Out
	fmt.Fprintf(out, "spec %s: silent wrong / scored trials, 80%% Wilson interval; last %d run(s), oldest first\n", opts.Spec, len(runs))
	for _, k := range keys {
		fmt.Fprintf(out, "\n%s  %s\n", k.Cell, k.Condition)
		tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
		for _, r := range runs {
			rate, ok := r.Rates[k]
			text := rate.String()
			if !ok {
				text = "not run"
			} else if rate.N == 0 {
				text = "0/0 (no scored trial)"
			}
			line := fmt.Sprintf("  %s\t%s\t%s", r.Run.Started.Local().Format("2006-01-02 15:04"), r.Run.RunID, text)
			if worse[r.Run.RunID][k] {
				line += "\tREGRESSION vs " + r.Run.PreviousRunID
			}
			fmt.Fprintln(tw, line)
		}
		tw.Flush()
	}
	return nil
}
