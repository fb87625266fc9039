package report

import (
	"math/rand/v2"
	"testing"
)

// TestSequenceEdges: n = 0 says nothing; the interval holds k/n and stays in [0, 1]; it
// narrows as trials come; it is wider than Wilson's at the same counts (the price of
// being valid at every n).
func TestSequenceEdges(t *testing.T) {
	if lo, hi := Sequence(0, 0, 0.8); lo != 0 || hi != 1 {
		t.Errorf("0/0: [%v, %v], want [0, 1]", lo, hi)
	}
	prevW := 1.0
	for _, n := range []int{2, 4, 10, 40, 200} {
		for _, k := range []int{0, n / 2, n} {
			lo, hi := Sequence(k, n, 0.8)
			p := float64(k) / float64(n)
			if lo < 0 || hi > 1 || lo > p || hi < p {
				t.Errorf("%d/%d: [%v, %v] does not hold %v", k, n, lo, hi, p)
			}
			wlo, whi := Wilson(k, n, 0.8)
			if hi-lo < whi-wlo {
				t.Errorf("%d/%d: the sequence [%v, %v] is narrower than Wilson's [%v, %v]", k, n, lo, hi, wlo, whi)
			}
		}
		lo, hi := Sequence(n/2, n, 0.8)
		if hi-lo >= prevW {
			t.Errorf("n=%d: width %v did not narrow from %v", n, hi-lo, prevW)
		}
		prevW = hi - lo
	}
	if lo, _ := Sequence(0, 10, 0.8); lo != 0 {
		t.Errorf("0/10: lo %v, want 0", lo)
	}
	if _, hi := Sequence(10, 10, 0.8); hi != 1 {
		t.Errorf("10/10: hi %v, want 1", hi)
	}
}

// simulate runs an adaptive design runs times on a reference agent that is wrong with
// probability p: trials one at a time until rule stops; it returns how often the final
// interval covered p and the mean number of trials.
func simulate(p float64, rule StopRule, runs int, rng *rand.Rand) (coverage, meanN float64) {
	covered, total := 0, 0
	for range runs {
		k, n := 0, 0
		for {
			if stop, _ := rule.Stop(k, n); stop {
				break
			}
			n++
			if rng.Float64() < p {
				k++
			}
		}
		lo, hi := rule.Interval(k, n)
		if lo <= p && p <= hi {
			covered++
		}
		total += n
	}
	return float64(covered) / float64(runs), float64(total) / float64(runs)
}

// TestSequenceCoverage is the reason for the design, over 2,000 simulated runs a setting of
// a reference agent that says done falsely with probability p, against the gate
// silent_wrong<=5%, stopping when the interval is as narrow as a fixed 10 trials give,
// when the gate is decided, or at 40 trials:
//
//   - the confidence sequence covers the true rate at least at its nominal 80% at every p;
//   - where the rate is far from the gate (the blind agent's 50% and above) it spends at
//     most half the trials of --reps 10;
//   - Wilson's interval with the same stopping rule (computed after every trial and acted
//     on) covers the true rate far less often than its 80% says (at 10% and 30%: its
//     narrow early intervals meet the width asked after two or three trials).
//
// The runs are drawn from a fixed seed, so the test is the same every time.
func TestSequenceCoverage(t *testing.T) {
	const runs, gate = 2000, 0.05
	sequence := StopRule{Width: FixedWidth(), Bars: []float64{gate}, Cap: 40,
		Interval: func(k, n int) (float64, float64) { return Sequence(k, n, DefaultConfidence) }}
	wilson := sequence
	wilson.Interval = func(k, n int) (float64, float64) { return Wilson(k, n, DefaultConfidence) }
	for _, p := range []float64{0.01, 0.05, 0.1, 0.3, 0.5, 0.8} {
		rng := rand.New(rand.NewPCG(7, uint64(p*1000)))
		cov, meanN := simulate(p, sequence, runs, rng)
		wcov, wN := simulate(p, wilson, runs, rand.New(rand.NewPCG(7, uint64(p*1000))))
		t.Logf("p=%.2f: sequence covers %.1f%% with %.1f trials on average; Wilson with the same rule %.1f%% with %.1f", p, 100*cov, meanN, 100*wcov, wN)
		if cov < DefaultConfidence {
			t.Errorf("p=%.2f: the sequence covered the true rate in %.1f%% of runs, below its nominal %.0f%%", p, 100*cov, 100*DefaultConfidence)
		}
		if p >= 0.5 && meanN > 5 {
			t.Errorf("p=%.2f, far from the gate: %.1f trials on average, want at most half of --reps 10", p, meanN)
		}
		if (p == 0.1 || p == 0.3) && wcov > DefaultConfidence-0.02 {
			t.Errorf("p=%.2f: Wilson after every trial covered %.1f%%; the test no longer shows why the sequence is needed", p, 100*wcov)
		}
	}
}
