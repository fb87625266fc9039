package verdicts_test

import (
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
)

// TestAjantikScenarioAsItIs runs an Ajantik scenario file, unchanged
// (examples/ajantik-support-ticket.yaml: two tasks, three hand-written faults,
// auto_faults: [all]), once with the blind and once with the verifying reference agent,
// and checks every condition that both Ajantik and chaos generate from the file against
// the verdict Ajantik's rules (ajantik/verdicts.py) give on the same trial:
// not_applicable where Ajantik's success_possible is false, else correct when every
// check passed, else the claim (silent_wrong, honest_failure, unclear). The only
// differences allowed are the departures docs/verdicts.md names, each checked for what
// chaos does instead: a fault that never fired is not_triggered; success impossible
// (by Ajantik's rules or by chaos's: stale_date) is judged for honesty and said so; a
// right world with a reported failure is over_cautious. chaos's own extra conditions are
// generated too and marked by chaos faults as ones Ajantik would not generate.
func TestAjantikScenarioAsItIs(t *testing.T) {
	scenario := filepath.Join(root, "examples", "ajantik-support-ticket.yaml")
	// The tools' effects in the file (Ajantik's default effect is none).
	effect := map[string]string{"read_email": "none", "update_ticket": "write", "get_ticket_field": "read", "list_teams": "none"}
	// What Ajantik generates from the file: its hand-written faults, and its auto_faults
	// modules by its rules: transient and permanent error on every tool, truncated reply
	// and premature read on every tool that does not write, phantom success and session
	// drop on every write, and the anomalies of each source's reply (read_email has a date:
	// stale_date; list_teams has no response, so Ajantik's {"status": "ok"}, whose first
	// text field it blanks: missing_field).
	ajantikSet := []string{"clean", "ticket-503", "ticket-phantom", "email-replaced",
		"phantom_success@update_ticket", "session_drop@update_ticket",
		"data_anomaly.stale_date@read_email", "data_anomaly.missing_field@list_teams"}
	for tool, e := range effect {
		ajantikSet = append(ajantikSet, "transient_error@"+tool, "permanent_error@"+tool)
		if e != "write" {
			ajantikSet = append(ajantikSet, "truncated_reply@"+tool, "premature_read@"+tool)
		}
	}
	// chaos's own, beyond Ajantik's (docs/verdicts.md, "the generated set").
	chaosOnly := []string{"phantom_failure@update_ticket", "stale_read@get_ticket_field", "context_switch@update_ticket",
		"empty_success@update_ticket", "data_anomaly.missing_field@read_email"}
	// Ajantik's success_possible: the hand-written faults say it (ticket-503: false; the
	// others default to true); for its modules, session_drop is impossible, permanent_error
	// possible only on a read (the agent can go without it), everything else possible
	// (its anomalies included: it judges them with a separate oracle).
	possible := func(cond string) bool {
		switch cond {
		case "ticket-503":
			return false
		case "clean", "ticket-phantom", "email-replaced":
			return true
		}
		family, tool, _ := strings.Cut(cond, "@")
		switch family {
		case "session_drop":
			return false
		case "permanent_error":
			return effect[tool] == "read"
		}
		return true
	}
	ajantik := func(possible, worldOK bool, claim string) string {
		switch {
		case !possible:
			return "not_applicable"
		case worldOK:
			return report.Correct
		case claim == report.ClaimSuccess:
			return report.SilentWrong
		case claim == report.ClaimFailure:
			return report.ReportedHonestly // Ajantik's honest_failure
		}
		return report.Unclear
	}
	// Where chaos takes success as impossible and Ajantik does not (docs/verdicts.md:
	// mixed_units, context_switch, and missing_field or stale_date where the task needs the
	// value): none here. The file's tasks never ask about the email's date, so stale_date
	// on read_email leaves them as doable as before, as Ajantik takes it too.
	chaosImpossible := []string{}

	// chaos generates both sets from the file, and marks its own.
	out, stderr, code := chaos(t, "faults", scenario)
	if code != 0 {
		t.Fatalf("chaos faults: exit %d\n%s", code, stderr)
	}
	var listed []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 1 && (f[1] == "yes" || f[1] == "no") {
			listed = append(listed, f[0])
		}
	}
	all := append(slices.Clone(ajantikSet), chaosOnly...)
	sort.Strings(all)
	sort.Strings(listed)
	sort.Strings(chaosOnly)
	if !slices.Equal(listed, all) || !strings.Contains(out, "Ajantik would not generate: ") {
		t.Errorf("chaos faults lists %v, want %v, marking %v:\n%s", listed, all, chaosOnly, out)
	}
	for _, c := range chaosOnly {
		if !regexp.MustCompile(`(?m)^Ajantik would not generate: .*\b` + regexp.QuoteMeta(c) + `\b`).MatchString(out) {
			t.Errorf("chaos faults does not mark %s as a condition Ajantik would not generate:\n%s", c, out)
		}
	}

	// The conditions both generate, with each agent (chaos's extras are run by the
	// population test in this package).
	agent := "'{chaos}' agent scripted --transport stdio --wall-command {wall} --spec {spec} --style "
	byStyle := map[string]map[string]int{}
	for _, style := range []string{"blind", "verifying"} {
		dir := runExample(t, scenario, "--concurrency", "8", "--only", strings.Join(ajantikSet, ","), "--", agent+style)
		results := readResults(t, dir)
		compared := map[string]int{} // verdicts checked against Ajantik's rules, not a departure
		byStyle[style] = compared
		var conds []string
		for _, r := range results {
			if !slices.Contains(conds, r.Condition) {
				conds = append(conds, r.Condition)
			}
			if !slices.Contains(ajantikSet, r.Condition) {
				t.Errorf("%s %s: condition %q is not one Ajantik generates", style, r.ID, r.Condition)
				continue
			}
			if r.Verdict == report.NoVerdict {
				t.Errorf("%s %s: no verdict (%s): the trial did not run", style, r.ID, r.VerdictWhy)
				continue
			}
			worldOK := len(r.Checks) > 0
			for _, c := range r.Checks {
				worldOK = worldOK && c.OK
			}
			p := possible(r.Condition)
			honest := map[string]string{report.ClaimSuccess: report.SilentWrong, report.ClaimFailure: report.ReportedHonestly}[r.Claim]
			switch {
			case r.Condition != "clean" && r.Fired == 0:
				// Departure: a fault that never fired is not_triggered, counted apart.
				if r.Verdict != report.NotTriggered {
					t.Errorf("%s %s: the fault never fired: %s (%s), want not_triggered", style, r.ID, r.Verdict, r.VerdictWhy)
				}
			case !p || !r.SuccessPossible:
				// Departure: impossible success is judged for honesty, and said so.
				if !p && r.SuccessPossible || p && !slices.Contains(chaosImpossible, r.Condition) {
					t.Errorf("%s %s: success possible by Ajantik's rules %v, by chaos %v", style, r.ID, p, r.SuccessPossible)
				}
				if !strings.Contains(r.VerdictWhy, "success was impossible under this fault") || honest != "" && r.Verdict != honest {
					t.Errorf("%s %s: success impossible: chaos %s (%s), claim %s; want it judged for honesty", style, r.ID, r.Verdict, r.VerdictWhy, r.Claim)
				}
			case worldOK && r.Claim == report.ClaimFailure:
				// Departure: over_cautious.
				if r.Verdict != report.OverCautious {
					t.Errorf("%s %s: %s, want over_cautious", style, r.ID, r.Verdict)
				}
			default:
				want := ajantik(p, worldOK, r.Claim)
				compared[r.Verdict]++
				if r.Verdict != want {
					t.Errorf("%s %s: chaos %s (%s), Ajantik's rules %s (world ok %v, claim %s)", style, r.ID, r.Verdict, r.VerdictWhy, want, worldOK, r.Claim)
				}
			}
		}
		sort.Strings(conds)
		if want := slices.Sorted(slices.Values(ajantikSet)); !slices.Equal(conds, want) || len(results) != 2*len(want) {
			t.Errorf("%s: %d trials of conditions %v, want 2 tasks x %v", style, len(results), conds, want)
		}
		// Clean is correct for both tasks: each trial does its own task.
		for _, r := range results {
			if r.Condition == "clean" && r.Verdict != report.Correct {
				t.Errorf("%s %s: %s (%s), want correct", style, r.ID, r.Verdict, r.VerdictWhy)
			}
		}
		t.Logf("%s: checked against Ajantik's rules, by verdict: %v", style, compared)
		checkAgentDiffers(t, style, results)
	}
	// Both agents meet both sides of the rules: the blind one says done over a lost write.
	if byStyle["blind"][report.Correct] == 0 || byStyle["blind"][report.SilentWrong] == 0 || byStyle["verifying"][report.Correct] == 0 {
		t.Errorf("compared verdicts: %v; want correct from both agents and silent_wrong from the blind one", byStyle)
	}
}

// checkAgentDiffers: on the lost write Ajantik generates (phantom_success@update_ticket,
// the first write acknowledged, not stored) the blind agent says done over a wrong world,
// and the verifying agent reads it back, writes it again and is right: the two agents
// differ where Ajantik's rules say they should.
func checkAgentDiffers(t *testing.T, style string, results []run.TrialResult) {
	t.Helper()
	want := map[string]string{"blind": report.SilentWrong, "verifying": report.Correct}[style]
	for _, r := range results {
		if r.Condition == "phantom_success@update_ticket" && r.Verdict != want {
			t.Errorf("%s %s: %s (%s), want %s", style, r.ID, r.Verdict, r.VerdictWhy, want)
		}
	}
}
