package report

import (
	"testing"

	"github.com/crashwall/chaos/run"
)

// TestDiffOutcomes: declared outcomes are compared per cell and condition on the bad
// side: a failure that held, a success that did not; unscored trials do not count.
func TestDiffOutcomes(t *testing.T) {
	trial := func(rep int, verdict string, outcomes map[string]bool) run.TrialResult {
		return run.TrialResult{ID: "x", Cell: "main", Condition: "clean", Rep: rep, Seed: int64(rep), Verdict: verdict, Outcomes: outcomes}
	}
	ok := map[string]bool{"lost": false, "done": true}
	bad := map[string]bool{"lost": true, "done": false}
	a := &Run{Results: []run.TrialResult{trial(1, Correct, ok), trial(2, Correct, ok), trial(3, Correct, ok), trial(4, NoVerdict, nil)}}
	b := &Run{Results: []run.TrialResult{trial(1, SilentWrong, bad), trial(2, SilentWrong, bad), trial(3, Correct, ok), trial(4, SilentWrong, bad)}}
	b.Manifest.Outcomes = OutcomeNames{Failures: []string{"lost"}, Successes: []string{"done"}}

	rows, err := DiffOutcomes(a, b, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("rows %+v, want one per outcome", rows)
	}
	for i, name := range []string{"lost", "done"} {
		r := rows[i]
		if r.Outcome != name || r.A.K != 0 || r.A.N != 3 || r.B.K != 3 || r.B.N != 4 || r.Worse != 2 || r.Better != 0 || r.Same != 1 {
			t.Errorf("%s: %+v; want 0/3 against 3/4, and on the 3 pairs both scored 2 worse, 1 the same", name, r)
		}
	}

	b.Manifest.Outcomes = OutcomeNames{}
	if rows, err := DiffOutcomes(a, b, false); err != nil || rows != nil {
		t.Errorf("no declared outcomes: %v, %v", rows, err)
	}
}
