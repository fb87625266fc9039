package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/crashwall/chaos/activities"
)

// newCmdReap is `chaos reap [--parent PID] -- COMMAND...`, which the worker (PID) puts
// between itself and an agent (Linux): it runs the command and kills every process the
// command leaves behind, also when the worker dies (activities.Reap). Not for people;
// hidden from the help.
func newCmdReap() *cobra.Command {
	return &cobra.Command{
		Use:                "reap [--parent PID] -- COMMAND [ARG...]",
		Short:              "Run an agent so that nothing it starts outlives it or the worker (internal)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			parent := 0
			if len(args) > 1 && args[0] == "--parent" {
				p, err := strconv.Atoi(args[1])
				if err != nil || p <= 0 {
					return badInput(fmt.Errorf("--parent %q: want the worker's process id", args[1]))
				}
				parent, args = p, args[2:]
			}
			if len(args) > 0 && args[0] == "--" {
				args = args[1:]
			}
			os.Exit(activities.Reap(parent, args))
			return nil
		},
	}
}
