package report

import (
	"strings"
	"testing"

	"github.com/crashwall/chaos/run"
)

func TestParseGate(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Gate
		err  string
	}{
		{in: "silent_wrong<=5%", want: Gate{Text: "silent_wrong<=5%", Outcome: "silent_wrong", Op: "<=", Bar: 0.05}},
		{in: " correct >= 0.9 ", want: Gate{Text: "correct >= 0.9", Outcome: "correct", Op: ">=", Bar: 0.9}},
		{in: "unclear<10%", want: Gate{Text: "unclear<10%", Outcome: "unclear", Op: "<", Bar: 0.1}},
		{in: "silent_wrong=5%", err: "want OUTCOME<=BAR"},
		{in: "silent_wrong<=five", err: `the bar "five" is not a number`},
		{in: "silent_wrong<=120%", err: "between 0% and 100%"},
	} {
		g, err := ParseGate(tt.in)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("ParseGate(%q) = %+v, %v; want an error with %q", tt.in, g, err, tt.err)
		case tt.err == "" && (err != nil || g != tt.want):
			t.Errorf("ParseGate(%q) = %+v, %v; want %+v", tt.in, g, err, tt.want)
		}
	}
}

// TestEvaluateGates: a gate fails only when the interval lies wholly past its bar; few
// trials leave it undecided, never failed.
func TestEvaluateGates(t *testing.T) {
	trials := func(cell string, bad, n int) []run.TrialResult {
		var out []run.TrialResult
		for i := range n {
			v := Correct
			if i < bad {
				v = SilentWrong
			}
			out = append(out, run.TrialResult{Cell: cell, Condition: "phantom_success@x", Rep: i + 1, Verdict: v})
		}
		return out
	}
	var results []run.TrialResult
	results = append(results, trials("agent=blind", 6, 6)...)      // 6/6: past 5% whatever the luck
	results = append(results, trials("agent=verifying", 0, 40)...) // 0/40: not past 5%, nor shown under it
	results = append(results, trials("agent=new", 1, 2)...)        // 1/2: too few to tell
	g, _ := ParseGate("silent_wrong<=5%")
	got := map[string]GateResult{}
	for _, r := range EvaluateGates([]Gate{g}, results, OutcomeNames{}) {
		got[r.Cell] = r
	}
	if r := got["agent=blind"]; r.Call != "fail" || r.K != 6 || r.N != 6 {
		t.Errorf("blind: %v, want fail on 6/6", r)
	}
	if r := got["agent=new"]; r.Call != "undecided" {
		t.Errorf("new: %v, want undecided on 1/2", r)
	}
	// 0 of 40 is no evidence of a rate above 5%: not a failure. Nor is it proof of one
	// under 5% at 80% for every n (the sequence's upper end is about 10%): undecided.
	if r := got["agent=verifying"]; r.Call != "undecided" || r.Lo != 0 {
		t.Errorf("verifying: %v, want undecided (never a failure) on 0/40", r)
	}
	if s := got["agent=blind"].String(); !strings.Contains(s, "silent_wrong 6/6, 80% confidence sequence [") || !strings.HasSuffix(s, ": fail") {
		t.Errorf("String() = %q", s)
	}
}
