// Command chaos is a crash test for AI agents: it puts a wall between an agent and its
// tools, injects one fault per trial, and reports how often the agent says "done" when
// the world is wrong.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/crashwall/chaos/trial"
)

func main() {
	ctx, stop := signalContext(context.Background())
	defer stop()
	stopProfile := startCPUProfile()
	// This executable is chaos: its workers may run agents under `chaos reap`.
	trial.ExecutableIsChaos = true
	io := &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	cmd := NewCmdRoot(io)
	cmd.SetArgs(os.Args[1:])
	err := cmd.ExecuteContext(ctx)
	code := ExitCode(err)
	if err != nil && code != 0 {
		fmt.Fprintln(io.ErrOut, "chaos: "+err.Error())
	}
	stopProfile()
	os.Exit(code)
}
