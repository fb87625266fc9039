package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/crashwall/chaos/report"
)

// ReportOptions are the inputs of `chaos report`.
type ReportOptions struct {
	IO       *IOStreams
	Runs     []string
	Out      string
	Registry string
	DataDir  string
}

// NewCmdReport builds `chaos report RUN...`.
func NewCmdReport(ios *IOStreams) *cobra.Command {
	opts := &ReportOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "report RUN_FOLDER... [--out FILE]",
		Short: "Write the HTML report (and JUnit XML) of one run, or of several runs side by side",
		Long: `chaos report reads run folders and writes one self-contained HTML file: the matrix of
conditions x arms with the silent-wrong rate, k/n and its 80% interval; every cell opens
to its trials and every trial to its recorded calls. With one run it (re)writes
report.html and junit.xml in the run folder; with several, each run is an arm and --out
names the file.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Runs = args
			return reportRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Out, "out", "", "the HTML file to write (required with several runs)")
	cmd.Flags().StringVar(&opts.Registry, "registry", "", "judge registry (default <data dir>/judges.json)")
	cmd.Flags().StringVar(&opts.DataDir, "data-dir", "", "data directory (default $XDG_DATA_HOME/chaos)")
	return cmd
}

func loadRuns(dirs []string) ([]*report.Run, error) {
	var runs []*report.Run
	for _, d := range dirs {
		r, err := report.LoadRun(d)
		if err != nil {
			return nil, badInput(err)
		}
		runs = append(runs, r)
	}
	return runs, nil
}

func registryPath(explicit, dataDirFlag string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	dir, err := dataDir(TemporalFlags{DataDir: dataDirFlag})
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "judges.json"), nil
}

func reportRun(opts *ReportOptions) error {
	if len(opts.Runs) > 1 && opts.Out == "" {
		return badInput(errors.New("with several runs, say where to write the report: --out FILE"))
	}
	runs, err := loadRuns(opts.Runs)
	if err != nil {
		return err
	}
	regPath, err := registryPath(opts.Registry, opts.DataDir)
	if err != nil {
		return err
	}
	reg, err := report.LoadRegistry(regPath)
	if err != nil {
		return badInput(fmt.Errorf("judge registry %s: %w", regPath, err))
	}
	p := report.Build(runs, report.AgreementsFor(runs, reg))
	if opts.Out == "" {
		if err := report.WriteFiles(runs[0].Dir, p); err != nil {
			return err
		}
		fmt.Fprintf(opts.IO.Out, "report: %s\njunit:  %s\n", filepath.Join(runs[0].Dir, "report.html"), filepath.Join(runs[0].Dir, "junit.xml"))
		return nil
	}
	f, err := os.Create(opts.Out)
	if err != nil {
		return badInput(err)
	}
	defer f.Close()
	if err := report.WriteHTML(f, p); err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.Out, "report: %s\n", opts.Out)
	return nil
}

// DiffOptions are the inputs of `chaos diff`.
type DiffOptions struct {
	IO       *IOStreams
	A, B     string
	Unpaired bool
}

// NewCmdDiff builds `chaos diff RUN_A RUN_B`.
func NewCmdDiff(ios *IOStreams) *cobra.Command {
	opts := &DiffOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "diff RUN_A RUN_B [--unpaired]",
		Short: "Compare two runs per condition: is B better, worse or the same as A?",
		Long: `chaos diff compares the silent-wrong rate of run B with run A per condition, paired on
the seeds both runs share (McNemar's exact test); then the share of every verdict either
run gave (unclear and no_verdict included, over all trials of the condition), and the
outcomes the spec declares, each the same way, and ends with the list of what changed.
Runs that share no seeds are refused unless --unpaired is given; then Fisher's exact test
compares the rates as independent.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.A, opts.B = args[0], args[1]
			return diffRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Unpaired, "unpaired", false, "compare runs that share no seeds, with an unpaired test")
	return cmd
}

func diffRun(opts *DiffOptions) error {
	runs, err := loadRuns([]string{opts.A, opts.B})
	if err != nil {
		return err
	}
	rows, err := report.Diff(runs[0], runs[1], opts.Unpaired)
	if errors.Is(err, report.ErrNoSharedSeeds) {
		return badInput(fmt.Errorf("%w: a paired test needs trials with the same cell, condition, replicate and seed in both runs (use --pair-with when running, or --unpaired to compare with Fisher's exact test)", err))
	}
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return badInput(errors.New("the runs have no condition in common"))
	}
	method := rows[0].Method
	fmt.Fprintf(opts.IO.Out, "A: %s\nB: %s\nmethod: %s, two-sided, alpha %.2f; the rate is silent wrong / scored trials\n\n", runs[0].Manifest.RunID, runs[1].Manifest.RunID, method, report.Alpha)
	if err := printDiffRows(opts, rows, false); err != nil {
		return err
	}
	changed := changedRows(rows, "silent_wrong")
	// Every verdict's share: what the silent-wrong rate cannot see (a fault that leaves
	// every trial unclear, an agent that now crashes).
	verdicts, err := report.DiffVerdicts(runs[0], runs[1], opts.Unpaired)
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.Out, "\nevery verdict: the rate is trials with that verdict / all trials of the condition; B VS A says more, fewer or the same\n\n")
	if err := printDiffRows(opts, verdicts, true); err != nil {
		return err
	}
	changed = append(changed, changedRows(verdicts, "")...)
	// The outcomes the spec declares, compared the same way.
	outcomes, err := report.DiffOutcomes(runs[0], runs[1], opts.Unpaired)
	if err != nil {
		return err
	}
	if len(outcomes) > 0 {
		fmt.Fprintf(opts.IO.Out, "\ndeclared outcomes: the rate is trials on the bad side (a failure that held, a success that did not) / scored trials\n\n")
		if err := printDiffRows(opts, outcomes, true); err != nil {
			return err
		}
		changed = append(changed, changedRows(outcomes, "")...)
	}
	if len(changed) == 0 {
		fmt.Fprintf(opts.IO.Out, "\nchanged: nothing, at alpha %.2f\n", report.Alpha)
		return nil
	}
	fmt.Fprintf(opts.IO.Out, "\nchanged, at alpha %.2f:\n", report.Alpha)
	for _, c := range changed {
		fmt.Fprintln(opts.IO.Out, "  "+c)
	}
	return nil
}

// changedRows names the rows whose call is not "same": "cell condition outcome: call (A ->
// B, p)"; outcome names rows that carry none.
func changedRows(rows []report.DiffRow, outcome string) []string {
	var out []string
	for _, r := range rows {
		if r.Call == "same" {
			continue
		}
		name := r.Outcome
		if name == "" {
			name = outcome
		}
		out = append(out, fmt.Sprintf("%s %s %s: %s (%s -> %s, p %s)", r.Cell, r.Condition, name, r.Call, r.A, r.B, report.FormatP(r.P)))
	}
	return out
}

// printDiffRows prints diff rows as a table, with the outcome of each row when withOutcome.
func printDiffRows(opts *DiffOptions, rows []report.DiffRow, withOutcome bool) error {
	tw := tabwriter.NewWriter(opts.IO.Out, 2, 4, 2, ' ', 0)
	head, lead := "CELL\tCONDITION", func(r report.DiffRow) string { return r.Cell + "\t" + r.Condition }
	if withOutcome {
		head, lead = head+"\tOUTCOME", func(r report.DiffRow) string { return r.Cell + "\t" + r.Condition + "\t" + r.Outcome }
	}
	if opts.Unpaired {
		fmt.Fprintln(tw, head+"\tA\tB\tP\tB VS A")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", lead(r), r.A, r.B, report.FormatP(r.P), r.Call)
		}
	} else {
		fmt.Fprintln(tw, head+"\tA\tB\tBETTER\tWORSE\tSAME\tP\tB VS A")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\n", lead(r), r.A, r.B, r.Better, r.Worse, r.Same, report.FormatP(r.P), r.Call)
		}
	}
	return tw.Flush()
}
