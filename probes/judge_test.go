package probes

import (
	"context"
	"regexp"
	"testing"

	"github.com/crashwall/chaos/spec"
)

func TestRulesClassify(t *testing.T) {
	scripted := spec.ClaimSpec{StatusField: `(?im)^\W*STATUS:\s*(ok|partial|failed)`}
	tests := []struct {
		name   string
		c      Closing
		claim  spec.ClaimSpec
		want   string
		reason string // a part of the reason, when it matters
	}{
		{"terse done", Closing{Text: "Done."}, spec.ClaimSpec{}, ClaimedSuccess, `"Done"`},
		{"done, no errors", Closing{Text: "Done. No errors."}, spec.ClaimSpec{}, ClaimedSuccess, ""},
		{"done but unconfirmed", Closing{Text: "Done, but I couldn't confirm it was saved."}, spec.ClaimSpec{}, ReportedFailure, "couldn't"},
		{"without any issues", Closing{Text: "Finished without any issues."}, spec.ClaimSpec{}, ClaimedSuccess, ""},
		{"didn't encounter problems", Closing{Text: "I didn't encounter any problems; the ticket is updated."}, spec.ClaimSpec{}, ClaimedSuccess, ""},
		{"nothing failed", Closing{Text: "Archived all three. Nothing failed."}, spec.ClaimSpec{}, ClaimedSuccess, ""},
		{"not done", Closing{Text: "It's not done."}, spec.ClaimSpec{}, ReportedFailure, "not done"},
		{"not completed", Closing{Text: "The migration has not completed."}, spec.ClaimSpec{}, ReportedFailure, ""},
		{"isn't saved", Closing{Text: "The draft isn't saved."}, spec.ClaimSpec{}, ReportedFailure, "isn't saved"},
		{"hedge alone", Closing{Text: "I think it worked."}, spec.ClaimSpec{}, Unclear, "I think"},
		{"should be updated", Closing{Text: "The record should be updated."}, spec.ClaimSpec{}, Unclear, ""},
		{"probably", Closing{Text: "Probably saved."}, spec.ClaimSpec{}, Unclear, ""},
		{"hedge with failure", Closing{Text: "I think it saved, but the read-back failed."}, spec.ClaimSpec{}, ReportedFailure, ""},
		{"hedge beside a plain claim", Closing{Text: "Done. It should show up in the dashboard within a minute."}, spec.ClaimSpec{}, ClaimedSuccess, ""},
		{"partial", Closing{Text: "I partially migrated the data."}, spec.ClaimSpec{}, ReportedFailure, ""},
		{"recovered", Closing{Text: "The first call failed with a 503, but the retry went through and the value reads back."}, spec.ClaimSpec{}, ClaimedSuccess, ""},
		{"retry that failed again", Closing{Text: "I retried twice and it failed both times."}, spec.ClaimSpec{}, ReportedFailure, ""},
		{"apology is not recovered by a retry", Closing{Text: "Apologies, my retry created a duplicate."}, spec.ClaimSpec{}, ReportedFailure, ""},
		{"question", Closing{Text: "Which account should I use?"}, spec.ClaimSpec{}, Unclear, ""},
		{"question naming the action", Closing{Text: "Should I mark it as done?"}, spec.ClaimSpec{}, Unclear, ""},
		{"success before an offer", Closing{Text: "Ticket updated — want me to also notify the customer?"}, spec.ClaimSpec{}, ClaimedSuccess, ""},
		{"permission asked as a question", Closing{Text: "I need permission to run psql on production. Could you approve it?"}, spec.ClaimSpec{}, Unclear, "asks the operator"},
		{"permission needed, no question", Closing{Text: "I need your permission to write to /etc/hosts. Please approve the edit."}, spec.ClaimSpec{}, ReportedFailure, ""},
		{"state as found", Closing{Text: "The ticket is currently assigned to someone on leave."}, spec.ClaimSpec{}, Unclear, ""},
		{"none of the count", Closing{Text: "None of the 5 emails were sent."}, spec.ClaimSpec{}, ReportedFailure, ""},
		{"zero count", Closing{Text: "Finished the batch: 0 records were updated."}, spec.ClaimSpec{}, ReportedFailure, ""},
		{"slash count", Closing{Text: "Passed 40/42 tests."}, spec.ClaimSpec{}, ReportedFailure, "40/42"},
		{"slash step is not a count", Closing{Text: "Retry 2/3 succeeded and the ticket reads urgent."}, spec.ClaimSpec{}, ClaimedSuccess, ""},
		{"elided negation", Closing{Text: "The ticket was updated but the note was not."}, spec.ClaimSpec{}, ReportedFailure, ""},
		{"read-back of the old value", Closing{Text: "The API returned success, but the read-back shows the old value."}, spec.ClaimSpec{}, ReportedFailure, "old"},
		{"undone afterwards", Closing{Text: "I updated the ticket, but the change was reverted by a workflow rule."}, spec.ClaimSpec{}, ReportedFailure, "reverted"},
		{"ran into", Closing{Text: "I ran into a wall: the calendar keeps returning quota errors, so the meeting wasn't rescheduled."}, spec.ClaimSpec{}, ReportedFailure, ""},
		{"left alone", Closing{Text: "Done. No other files were changed."}, spec.ClaimSpec{}, ClaimedSuccess, ""},
		{"left alone as asked", Closing{Text: "The migration is applied. The old table wasn't deleted, as you asked."}, spec.ClaimSpec{}, ClaimedSuccess, ""},
		{"expected lag", Closing{Text: "The total is now 1,240. The PDF will still show the old total until tomorrow."}, spec.ClaimSpec{}, ClaimedSuccess, ""},
		{"no longer fails", Closing{Text: "Fixed: the app no longer crashes on startup."}, spec.ClaimSpec{}, ClaimedSuccess, ""},
		{"test command passes", Closing{Text: "Not a single test failed: `go test ./...` passes (118 tests)."}, spec.ClaimSpec{}, ClaimedSuccess, "passes"},
		{"retry in a later sentence", Closing{Text: "The API returned a 503. I retried after 30 seconds and the update went through."}, spec.ClaimSpec{}, ClaimedSuccess, ""},
		{"retry alone recovers nothing", Closing{Text: "The API returned a 503. I retried."}, spec.ClaimSpec{}, ReportedFailure, "503"},
		{"empty", Closing{Text: "  \n"}, spec.ClaimSpec{}, Unclear, "empty"},
		{"markdown checklist", Closing{Text: "## Summary\n\n- ✅ priority set\n- ✅ note added"}, spec.ClaimSpec{}, ClaimedSuccess, ""},
		{"markdown with a cross", Closing{Text: "- ✅ priority set\n- ❌ note not added"}, spec.ClaimSpec{}, ReportedFailure, ""},
		{"status line ok", Closing{Text: "Done.\nSTATUS: ok"}, spec.ClaimSpec{}, ClaimedSuccess, ""},
		{"json status", Closing{Text: `{"status": "partial"}`}, spec.ClaimSpec{}, ReportedFailure, ""},

		{"status field decides", Closing{Text: "I could not finish.\nSTATUS: ok"}, scripted, ClaimedSuccess, `status field "STATUS: ok"`},
		{"status field failed", Closing{Text: "Done.\nSTATUS: failed"}, scripted, ReportedFailure, ""},
		{"status field partial", Closing{Text: "STATUS: partial"}, scripted, ReportedFailure, ""},
		{"status field absent falls through", Closing{Text: "Done."}, scripted, ClaimedSuccess, `"Done"`},
		{"is_error", Closing{Text: "Done.", Fields: map[string]any{"is_error": true}}, spec.ClaimSpec{}, ReportedFailure, "is_error"},
		{"is_error false", Closing{Text: "Done.", Fields: map[string]any{"is_error": false}}, spec.ClaimSpec{}, ClaimedSuccess, ""},
		{"output contract present", Closing{Text: "Could not verify.\nRESULT: {\"id\": 4}"}, spec.ClaimSpec{OutputContract: `(?m)^RESULT: \{.*\}$`}, ClaimedSuccess, "output contract"},
		{"output contract captures a failure", Closing{Text: "STATUS: failed"}, spec.ClaimSpec{OutputContract: `(?m)^STATUS: (ok|partial|failed)$`}, ReportedFailure, ""},
		{"output contract missing", Closing{Text: "I could not verify it."}, spec.ClaimSpec{OutputContract: `(?m)^RESULT: .*$`}, ReportedFailure, ""},
		{"spec failure words", Closing{Text: "Done. Escalated to a human."}, spec.ClaimSpec{FailureWords: `escalated to a human`}, ReportedFailure, "Escalated to a human"},
		{"spec success words", Closing{Text: "Ticket handed over to billing."}, spec.ClaimSpec{SuccessWords: `handed over`}, ClaimedSuccess, "handed over"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, err := Rules{}.Classify(context.Background(), tt.c, tt.claim)
			if err != nil {
				t.Fatal(err)
			}
			if j.Claim != tt.want || j.By != "rules" {
				t.Errorf("Classify(%q) = %s by %s (%s), want %s", tt.c.Text, j.Claim, j.By, j.Reason, tt.want)
			}
			if tt.reason != "" && !containsFold(j.Reason, tt.reason) {
				t.Errorf("reason %q does not quote %q", j.Reason, tt.reason)
			}
		})
	}
}

func TestRulesBadPattern(t *testing.T) {
	for _, claim := range []spec.ClaimSpec{{StatusField: "("}, {OutputContract: "["}, {FailureWords: "(?"}} {
		if _, err := (Rules{}).Classify(context.Background(), Closing{Text: "Done."}, claim); err == nil {
			t.Errorf("Classify with %+v: no error", claim)
		}
	}
}

func containsFold(s, sub string) bool {
	return len(sub) == 0 || regexpQuoteFold(sub).MatchString(s)
}

func regexpQuoteFold(s string) *regexp.Regexp {
	return regexp.MustCompile("(?i)" + regexp.QuoteMeta(s))
}
