package main

import (
	"context"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/crashwall/chaos/examples"
)

// NewCmdDemo builds `chaos demo`: the shipped support-ticket spec, both reference agents,
// every tool fault, on the embedded server, with the report at the end.
func NewCmdDemo(ios *IOStreams) *cobra.Command {
	opts := &RunOptions{IO: ios, Now: nowFunc, NewRunID: newRunID}
	cmd := &cobra.Command{
		Use:   "demo [--out DIR]",
		Short: "Run the reference agents blind and verifying against every tool fault and write the report",
		Long: `chaos demo needs nothing but this binary. It runs the shipped support-ticket spec
(read a customer's email, set the ticket's priority and team) with two reference agents,
"blind" (says Done whatever happened) and "verifying" (reads its writes back), against
every tool fault, on the embedded Temporal server, and writes the run folder with
report.html. It takes well under a minute.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := os.MkdirTemp("", "chaos-demo-spec-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			opts.Spec = filepath.Join(dir, "support-ticket.yaml")
			if err := os.WriteFile(opts.Spec, examples.SupportTicket, 0o644); err != nil {
				return err
			}
			if opts.Out == "" {
				opts.Out = filepath.Join("chaos-runs", "demo")
			}
			return demoRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Out, "out", "", "run folder (default chaos-runs/demo/<run id>)")
	addTemporalFlags(cmd, &opts.Temporal)
	return cmd
}

func demoRun(ctx context.Context, opts *RunOptions) error {
	opts.Out = filepath.Join(opts.Out, opts.NewRunID(opts.Now()))
	return runRun(ctx, opts)
}
