package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/crashwall/chaos/manual"
)

// ProxyOptions are the inputs of `chaos proxy ...`.
type ProxyOptions struct {
	IO      *IOStreams
	DataDir string
	Name    string
	Command []string
	Said    string
	World   string
	// Chaos is the chaos binary the printed configuration starts (default: this one).
	Chaos string
	// Shuffle shuffles a new deck (tests replace it).
	Shuffle func([]string)
}

// NewCmdProxy builds `chaos proxy`, manual mode.
func NewCmdProxy(ios *IOStreams) *cobra.Command {
	opts := &ProxyOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "proxy",
		Short: "Manual mode: put the wall in front of a real MCP server for an agent you drive yourself",
		Long: `Manual mode is for agents chaos cannot start, such as desktop apps.

  chaos proxy setup --name NAME -- CMD ARGS...   prints the MCP config entry to use instead of yours
  chaos proxy start                              opens a run with a fault you are not told
  (work with your agent as usual)
  chaos proxy end --said done|not-done|unsure    the calls, the fault and the verdict
  chaos proxy results                            every run so far, per fault

While no run is open the proxy passes every call through and records nothing. Seven
runs see each of the seven faults once, in an order shuffled for you. Everything stays
in your data directory.`,
	}
	cmd.PersistentFlags().StringVar(&opts.DataDir, "data-dir", "", "where manual runs are kept (default $XDG_DATA_HOME/chaos)")
	setup := &cobra.Command{
		Use:   "setup --name NAME -- CMD [ARGS...]",
		Short: "Print the MCP config entry that puts the wall in front of the server CMD",
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Command = args
			return proxySetup(opts)
		},
	}
	setup.Flags().StringVar(&opts.Name, "name", "", "the server's name in your MCP configuration")
	serve := &cobra.Command{
		Use:   "serve --name NAME",
		Short: "Serve NAME's tools over MCP stdio (what the entry from setup runs)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return proxyServe(cmd.Context(), opts) },
	}
	serve.Flags().StringVar(&opts.Name, "name", "", "the name given to setup")
	start := &cobra.Command{
		Use:   "start [--name NAME]",
		Short: "Open a run with a fault you are not told",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return proxyStart(opts) },
	}
	start.Flags().StringVar(&opts.Name, "name", "", "the server (default: the only one set up)")
	end := &cobra.Command{
		Use:   "end --said done|not-done|unsure [--world right|wrong]",
		Short: "End the open run: the calls (the faulted one marked), the fault and the verdict",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return proxyEnd(opts) },
	}
	end.Flags().StringVar(&opts.Said, "said", "", "what the agent told you at the end: done, not-done or unsure")
	end.Flags().StringVar(&opts.World, "world", "", "what you found when you looked at the result: right or wrong (used where the calls cannot tell)")
	results := &cobra.Command{
		Use:   "results",
		Short: "Every manual run so far, per fault",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return proxyResults(opts) },
	}
	cmd.AddCommand(setup, serve, start, end, results)
	return cmd
}

func (o *ProxyOptions) mode() *manual.Mode {
	return &manual.Mode{DataDir: o.DataDir, Out: o.IO.Out, Shuffle: o.Shuffle}
}

func proxySetup(opts *ProxyOptions) error {
	bin := opts.Chaos
	if bin == "" {
		var err error
		if bin, err = os.Executable(); err != nil {
			return err
		}
	}
	return opts.mode().Setup(opts.Name, opts.Command, bin)
}

func proxyServe(ctx context.Context, opts *ProxyOptions) error {
	return opts.mode().Serve(ctx, opts.Name, opts.IO.In, opts.IO.Out)
}

func proxyStart(opts *ProxyOptions) error { return opts.mode().Start(opts.Name) }

func proxyEnd(opts *ProxyOptions) error { return opts.mode().End(opts.Said, opts.World) }

func proxyResults(opts *ProxyOptions) error { return opts.mode().Results() }
