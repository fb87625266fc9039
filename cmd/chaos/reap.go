package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/crashwall/chaos/reap"
)

// newCmdReap is `chaos reap [--parent PID] -- COMMAND...`, which the worker (PID) puts
// between itself and an agent (Linux) when there is no chaos-relay beside chaos (which
// does the same as `chaos-relay reap`, for a fraction of the start-up): it runs the
// command and kills every process the command leaves behind, also when the worker dies
// (package reap). Not for people; hidden from the help.
func newCmdReap() *cobra.Command {
	return &cobra.Command{
		Use:                "reap [--parent PID] -- COMMAND [ARG...]",
		Short:              "Run an agent so that nothing it starts outlives it or the worker (internal)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			os.Exit(reap.Main(args, "chaos reap"))
			return nil
		},
	}
}
