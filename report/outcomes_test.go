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

// TestDiffVerdicts: a model fault that leaves all 6 trials unclear has no silent wrong, so
// the silent-wrong diff calls it the same (p 1); the verdict diff sees it (unclear 0/6 -> 6/6, more,
// McNemar p = 2/2^6), and the runs, which share every seed, are not refused as unpaired.
func TestDiffVerdicts(t *testing.T) {
	var a, b Run
	for rep := 1; rep <= 6; rep++ {
		tr := run.TrialResult{ID: "x", Cell: "main", Condition: "llm_error_single", Rep: rep, Seed: int64(rep)}
		tr.Verdict = Correct
		a.Results = append(a.Results, tr)
		tr.Verdict = Unclear
		b.Results = append(b.Results, tr)
	}
	rows, err := Diff(&a, &b, false)
	if err != nil {
		t.Fatalf("the silent-wrong diff of runs that share every seed: %v", err)
	}
	if len(rows) != 1 || rows[0].Call != "same" {
		t.Errorf("silent-wrong rows %+v: want one row, the same", rows)
	}
	rows, err = DiffVerdicts(&a, &b, false)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]DiffRow{}
	for _, r := range rows {
		got[r.Outcome] = r
	}
	if len(rows) != 2 {
		t.Fatalf("rows %+v, want one per verdict seen (correct, unclear)", rows)
	}
	const p = 2.0 / 64
	if r := got[Unclear]; r.A.K != 0 || r.A.N != 6 || r.B.K != 6 || r.B.N != 6 || r.Worse != 6 || r.Call != "more" || r.P < p-1e-9 || r.P > p+1e-9 {
		t.Errorf("unclear: %+v; want 0/6 -> 6/6, 6 discordant, p %.4f, more", r, p)
	}
	if r := got[Correct]; r.A.K != 6 || r.B.K != 0 || r.Call != "fewer" {
		t.Errorf("correct: %+v; want 6/6 -> 0/6, fewer", r)
	}

	// No seed in common: refused as before.
	for i := range b.Results {
		b.Results[i].Seed += 100
	}
	if _, err := DiffVerdicts(&a, &b, false); err != ErrNoSharedSeeds {
		t.Errorf("runs with no shared seed: %v, want ErrNoSharedSeeds", err)
	}
}

// TestDiffNoScoredSide: runs that share their seeds are paired even when one side has no
// scored trial (every trial no_verdict): the diff says so in its rates, not "no shared seeds".
func TestDiffNoScoredSide(t *testing.T) {
	var a, b Run
	for rep := 1; rep <= 3; rep++ {
		tr := run.TrialResult{ID: "x", Cell: "main", Condition: "clean", Rep: rep, Seed: int64(rep), Verdict: Correct}
		a.Results = append(a.Results, tr)
		tr.Verdict = NoVerdict
		b.Results = append(b.Results, tr)
	}
	rows, err := Diff(&a, &b, false)
	if err != nil {
		t.Fatalf("runs sharing every seed, B with nothing scored: %v", err)
	}
	if len(rows) != 1 || rows[0].A.N != 3 || rows[0].B.N != 0 {
		t.Errorf("rows %+v: want A 0/3, B 0/0", rows)
	}
}
