package main

import (
	"fmt"

	"github.com/crashwall/chaos/proxies/hub"
	"github.com/spf13/cobra"
)

// NewCmdVersion prints the version.
func NewCmdVersion(ios *IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of chaos",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprintln(ios.Out, "chaos "+hub.Version)
			return nil
		},
	}
}
