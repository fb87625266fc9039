package main

import (
	"fmt"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/worker"
)

// uiAfterRun is what the console says of the web UI when a run whose embedded server lives
// in this process ends: the link printed at its start dies with the process, and the
// history behind it stays in the data directory, where `chaos server` serves it (and every
// other run's) on its default UI port. "" when the UI outlives this process (a running
// chaos server, --temporal) or there was none.
func uiAfterRun(c *conn, flags TemporalFlags, runID string) string {
	if c == nil || c.Server == nil || c.UI == "" {
		return ""
	}
	cmd := "chaos server"
	if def, err := worker.DefaultDataDir(); err != nil || c.DataDir != def {
		cmd += " --data-dir " + spec.ShellQuote(c.DataDir)
	}
	return fmt.Sprintf("web UI: the link above closes with this process; the run's history stays in %s.\n"+
		"  To open it: %s, then http://127.0.0.1:%d/namespaces/%s/workflows/%s",
		c.DataDir, cmd, serverUIPort, namespace(flags), run.ExperimentWorkflowID(runID))
}

// serverUIPort is chaos server's default --ui-port.
const serverUIPort = 8233
