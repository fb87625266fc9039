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

// TestDiffOutcomesEverySharedSeed: a faulted run at rate 0.5 fires in half its trials; the
// others (not_triggered) still count on their declared outcome, so the run is compared on
// every shared seed and reads as half as bad as a run faulted at rate 1, not as bad.
func TestDiffOutcomesEverySharedSeed(t *testing.T) {
	trial := func(rep int, verdict string, lost bool) run.TrialResult {
		return run.TrialResult{ID: "x", Cell: "main", Condition: "clean", Rep: rep, Seed: int64(rep), Verdict: verdict, Outcomes: map[string]bool{"lost": lost}}
	}
	var a, half, full Run
	for rep := 1; rep <= 8; rep++ {
		a.Results = append(a.Results, trial(rep, Correct, false))
		full.Results = append(full.Results, trial(rep, SilentWrong, true))
		if rep%2 == 0 {
			half.Results = append(half.Results, trial(rep, SilentWrong, true))
		} else {
			half.Results = append(half.Results, trial(rep, NotTriggered, false))
		}
	}
	for _, tt := range []struct {
		name        string
		b           *Run
		k, n, worse int
	}{
		{"rate 0.5", &half, 4, 8, 4},
		{"rate 1", &full, 8, 8, 8},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.b.Manifest.Outcomes = OutcomeNames{Failures: []string{"lost"}}
			rows, err := DiffOutcomes(&a, tt.b, false)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 1 {
				t.Fatalf("rows %+v", rows)
			}
			r := rows[0]
			if r.B.K != tt.k || r.B.N != tt.n || r.A.N != 8 || r.Worse != tt.worse || r.Same != 8-tt.worse || r.Method == "" {
				t.Errorf("%+v; want B %d/%d, %d worse of 8 shared seeds", r, tt.k, tt.n, tt.worse)
			}
		})
	}
}
