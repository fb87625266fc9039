package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/store"
)

// runsFromStore is `chaos runs` with a results database: the runs it holds, newest first,
// with their silent-wrong count and, for scheduled runs, whether they regressed.
func runsFromStore(ctx context.Context, opts *RunsOptions, db *store.Store) error {
	runs, err := db.Runs(ctx, store.RunFilter{Limit: opts.Limit})
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(opts.IO.Out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSPEC\tSTARTED\tTRIALS\tSILENT WRONG\tSCHEDULE")
	for _, r := range runs {
		sched := "-"
		if r.Schedule != "" {
			sched = r.Schedule
			if r.Regressed {
				sched += " (REGRESSION)"
			}
		}
		trials := fmt.Sprintf("%d/%d", r.Finished, r.Trials)
		if r.Aborted != "" {
			trials += " aborted"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", r.RunID, r.SpecName, r.Started.Local().Format("2006-01-02 15:04:05"), trials, r.ByVerdict[report.SilentWrong], sched)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(runs) == 0 {
		fmt.Fprintf(opts.IO.Out, "(no runs in the results database %s yet)\n", db.Where())
	}
	return nil
}
