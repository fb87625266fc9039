package run

import "testing"

// TestEnding: how an agent's ending closes its trial, the one mapping the workflow and
// RunTrial share.
func TestEnding(t *testing.T) {
	for _, tt := range []struct {
		name            string
		res             AgentResult
		reason, failure string
	}{
		{"exited", AgentResult{ExitCode: 3}, "agent exited", ""},
		{"did not start", AgentResult{Error: "sh: not found"}, "agent did not start", "the agent command could not start: sh: not found"},
		{"timed out", AgentResult{TimedOut: true, ExitCode: 143}, "agent timed out", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			reason, failure := tt.res.Ending()
			if reason != tt.reason || failure != tt.failure {
				t.Errorf("Ending() = %q, %q; want %q, %q", reason, failure, tt.reason, tt.failure)
			}
		})
	}
}
