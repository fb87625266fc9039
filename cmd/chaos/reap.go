package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/crashwall/chaos/activities"
)

// newCmdReap is `chaos reap -- COMMAND...`, which the worker puts between itself and an
// agent (Linux): it runs the command and kills every process the command leaves behind,
// also when the worker dies (activities.Reap). Not for people; hidden from the help.
func newCmdReap() *cobra.Command {
	return &cobra.Command{
		Use:                "reap -- COMMAND [ARG...]",
		Short:              "Run an agent so that nothing it starts outlives it or the worker (internal)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 && args[0] == "--" {
				args = args[1:]
			}
			os.Exit(activities.Reap(args))
			return nil
		},
	}
}
