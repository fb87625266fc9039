package report

import (
	"reflect"
	"testing"

	"github.com/crashwall/chaos/run"
)

// TestReviewedNote: a rate says how many of its scored verdicts the reviewer decided and
// with what agreement; an unsure answer, or a review of an unscored trial, decided
// nothing; the matrix counts them per cell and AgreementsFor looks the reviewer up apart
// from the claim judge.
func TestReviewedNote(t *testing.T) {
	rv := func(decided bool) *run.Review {
		return &run.Review{Verdict: "wrong", Decided: decided, By: "model:rev", Agreement: "not measured"}
	}
	results := []run.TrialResult{
		{ID: "a", Cell: "main", Condition: "phantom", Verdict: SilentWrong, Review: rv(true)},
		{ID: "b", Cell: "main", Condition: "phantom", Verdict: Correct, Review: rv(false)},
		{ID: "c", Cell: "main", Condition: "phantom", Verdict: NoVerdict, Review: rv(true)},
		{ID: "d", Cell: "main", Condition: "clean", Verdict: Correct},
	}
	all := func(run.TrialResult) bool { return true }
	if got, want := ReviewedNote(results, all), "1 of 3 decided by the reviewer model:rev (its agreement with people: not measured)"; got != want {
		t.Errorf("note %q, want %q", got, want)
	}
	if got := ReviewedNote(results, func(t run.TrialResult) bool { return t.Condition == "clean" }); got != "" {
		t.Errorf("clean's note %q, want none", got)
	}
	if got, want := ReviewedLines(results, []string{"clean", "phantom"}), []string{"phantom: 1 of 2 decided by the reviewer model:rev (its agreement with people: not measured)"}; !reflect.DeepEqual(got, want) {
		t.Errorf("lines %q, want %q", got, want)
	}
	var entries []Entry
	for _, r := range results {
		entries = append(entries, Entry{Trial: r, Arm: "main", Key: r.ID})
	}
	if got := NewMatrix(entries, nil).Cells["phantom"]["main"].Reviewed; !reflect.DeepEqual(got, map[string]int{"model:rev": 1}) {
		t.Errorf("the cell counts %v decided by the reviewer, want model:rev 1", got)
	}
	reg := &Registry{}
	reg.Put(Agreement{Reviewer: "model:rev", Kappa: 0.7, Lo: 0.5, Hi: 0.85, N: 40})
	ags := AgreementsFor([]*Run{{Manifest: Manifest{Language: "en"}, Results: results}}, reg)
	if len(ags) != 2 || ags[0].Measured || ags[0].Profile != "generic" || !ags[1].Measured || ags[1].Reviewer != "model:rev" {
		t.Errorf("agreements %+v, want the judge not measured for generic and the reviewer measured", ags)
	}
	if got := ags[1].ReviewerText(); got != "Cohen's kappa 0.70 [0.50, 0.85] on 40 labelled cases" {
		t.Errorf("reviewer text %q", got)
	}
}
