package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/crashwall/chaos/spec"
)

// IOStreams are the command's standard streams, replaced by buffers in tests.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// Exit codes, documented in docs/cli.md.
const (
	ExitOK         = 0
	ExitBadInput   = 1
	ExitUnexpected = 3
	// ExitNoScore: the run finished, but no trial could be scored (the agent never met
	// the wall, every trial timed out, no fault fired...): there is no rate to act on.
	ExitNoScore = 4
	// ExitGate (5, run_gate.go): a --gate failed on the evidence.
	// ExitStopped: the run stopped before all its trials ran (aborted, or stopped by
	// --budget); its folder holds the trials that did.
	ExitStopped = 6
)

// ExitError carries the exit code of a failed command.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// badInput marks err as the user's to fix (exit 1).
func badInput(err error) error { return &ExitError{Code: ExitBadInput, Err: err} }

// ExitCode maps an error to the process exit code: nil 0, bad input (a spec with
// problems, a wrong flag, an error whose BadInput method says so) 1, anything else 3.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	var se *spec.Errors
	if errors.As(err, &se) {
		return ExitBadInput
	}
	var fe flagError
	if errors.As(err, &fe) {
		return ExitBadInput
	}
	// A package's error for a mistake of the user's says so (manual.InputError).
	var bi interface{ BadInput() bool }
	if errors.As(err, &bi) && bi.BadInput() {
		return ExitBadInput
	}
	return ExitUnexpected
}

type flagError struct{ error }

// NewCmdRoot builds the chaos command tree.
func NewCmdRoot(ios *IOStreams) *cobra.Command {
	root := &cobra.Command{
		Use:   "chaos",
		Short: "Crash tests for AI agents: how often does your agent say \"done\" when the world is wrong?",
		Long: `chaos puts a wall between an agent and its tools, injects one fault per trial
(a save that reports success and stores nothing, a reply cut off mid-JSON, a 503, ...),
records every call with the real state of the world after it, and judges separately
whether the world ended right and whether the agent claimed success.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(ios.In)
	root.SetOut(ios.Out)
	root.SetErr(ios.ErrOut)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return flagError{withFlagSuggestion(c, err)}
	})
	root.AddCommand(
		NewCmdDemo(ios, nil),
		NewCmdRun(ios, nil),
		NewCmdServer(ios),
		NewCmdWorker(ios),
		NewCmdRuns(ios),
		NewCmdShow(ios),
		NewCmdTrend(ios),
		NewCmdSchedule(ios),
		NewCmdAbort(ios),
		NewCmdResume(ios),
		NewCmdReport(ios),
		NewCmdDiff(ios),
		NewCmdJudge(ios),
		NewCmdFaults(ios, nil),
		NewCmdModel(ios),
		NewCmdWall(ios, nil),
		NewCmdRecord(ios, nil),
		NewCmdProxy(ios),
		NewCmdAgent(ios),
		NewCmdSkill(ios),
		NewCmdMcp(ios),
		NewCmdVersion(ios),
		newCmdReap(),
	)
	usageErrors(root)
	return root
}

// usageErrors makes a wrong number of arguments bad input (exit 1) on every command,
// as a wrong flag already is, with the usage line in the message.
func usageErrors(c *cobra.Command) {
	if args := c.Args; args != nil {
		c.Args = func(cmd *cobra.Command, a []string) error {
			if err := args(cmd, a); err != nil {
				return flagError{fmt.Errorf("%w (usage: %s)", err, cmd.UseLine())}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		usageErrors(sub)
	}
}

// withFlagSuggestion adds "did you mean --reps?" to pflag's "unknown flag: --rep" when one
// of the command's flags is that close.
func withFlagSuggestion(c *cobra.Command, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return err
	}
	var names []string
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	if m, ok := spec.Closest(name, names); ok {
		return fmt.Errorf("%w (did you mean --%s?)", err, m)
	}
	return err
}
