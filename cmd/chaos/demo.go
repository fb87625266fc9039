package main

import (
	"context"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/crashwall/chaos/examples"
)

// NewCmdDemo builds `chaos demo`: the shipped support-ticket spec, both reference agents,
// every tool fault, on the embedded server, with the report at the end. It is `chaos run`
// of the embedded example: the same --out, the same run id, the run folder named by it.
func NewCmdDemo(ios *IOStreams, runF func(context.Context, *RunOptions) error) *cobra.Command {
	opts := &RunOptions{IO: ios, Now: nowFunc, NewRunID: newRunID}
	cmd := &cobra.Command{
		Use:   "demo [--out DIR]",
		Short: "Run the reference agents blind and verifying against every tool fault and write the report",
		Long: `chaos demo needs nothing but this binary. It runs the shipped support-ticket spec
(read a customer's email, set the ticket's priority and team) with two reference agents,
"blind" (says Done whatever happened) and "verifying" (reads its writes back), against
every tool fault, on the embedded Temporal server, and writes the run folder with
report.html and the spec it ran (spec.yaml). It takes well under a minute.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Spec, opts.SpecData = "support-ticket.yaml", examples.SupportTicket
			opts.RunsDir = filepath.Join("chaos-runs", "demo")
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Out, "out", "", "run folder (default chaos-runs/demo/<run id>)")
	addTemporalFlags(cmd, &opts.Temporal)
	return cmd
}
