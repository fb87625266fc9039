package agents

import (
	"strings"
	"testing"
)

// TestVerifyingClosing: the verifying agent's closing message when a write does not read
// back names what went wrong, and never ends with an empty list of problems (a dropped
// write answers "updated", so there may be none from the tools).
func TestVerifyingClosing(t *testing.T) {
	sc := &Script{Writes: []Step{{Key: "team", Want: "payments"}}}
	tests := []struct {
		name     string
		problems []string
		want     string
	}{
		{"no errors from the tools", nil, "team could not be confirmed; the tools reported no error, but reading back did not show the values written.\nSTATUS: failed"},
		{"errors", []string{"update_ticket: 503", "update_ticket: 503"}, "team could not be confirmed; problems seen: update_ticket: 503.\nSTATUS: failed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := &agent{style: Verifying, problems: tc.problems}
			got := a.closing(sc, []string{"team"})
			if !strings.HasSuffix(got, tc.want) || strings.Contains(got, ": .") {
				t.Errorf("closing %q, want it to end %q", got, tc.want)
			}
		})
	}
}
