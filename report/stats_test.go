package report

import (
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"
)

// z80 is the 90th percentile of the standard normal, the z of a two-sided 80% interval,
// as tabled to double precision (e.g. R's qnorm(0.9) printed with 17 digits).
const z80 = 1.2815515655446004

func TestNormalQuantile(t *testing.T) {
	// Reference values: R qnorm(p) with options(digits = 17).
	tests := []struct{ p, want float64 }{
		{0.5, 0},
		{0.9, z80},
		{0.975, 1.959963984540054},
		{0.995, 2.5758293035489004},
		{0.1, -z80},
	}
	for _, tt := range tests {
		if got := normalQuantile(tt.p); math.Abs(got-tt.want) > 1e-14 {
			t.Errorf("normalQuantile(%v) = %.17g, want %.17g", tt.p, got, tt.want)
		}
	}
}

// Newcombe RG (1998). Two-sided confidence intervals for the single proportion: comparison
// of seven methods. Statistics in Medicine 17:857-872. Table I, method 3 (Wilson score
// interval without continuity correction), 95% intervals printed to 4 decimals.
func TestWilsonNewcombeTableI(t *testing.T) {
	tests := []struct {
		k, n   int
		lo, hi float64
	}{
		{81, 263, 0.2553, 0.3662},
		{15, 148, 0.0624, 0.1605},
		{0, 20, 0.0000, 0.1611},
		{1, 29, 0.0061, 0.1718},
	}
	for _, tt := range tests {
		lo, hi := Wilson(tt.k, tt.n, 0.95)
		if round4(lo) != tt.lo || round4(hi) != tt.hi {
			t.Errorf("Wilson(%d, %d, 0.95) = (%.4f, %.4f), want (%.4f, %.4f) as in Newcombe's Table I", tt.k, tt.n, lo, hi, tt.lo, tt.hi)
		}
	}
}

// At 80%, against Wilson's (1927) closed form written the other way round,
// (2k + z² ± z·sqrt(z² + 4k(n-k)/n)) / (2(n + z²)), with z tabled rather than computed:
// a second derivation, so a slip in either the algebra or the quantile shows.
func TestWilson80ClosedForm(t *testing.T) {
	for _, c := range []struct{ k, n int }{{3, 10}, {0, 5}, {5, 5}, {7, 40}, {17, 23}, {1, 1}, {250, 1000}} {
		k, n := float64(c.k), float64(c.n)
		root := z80 * math.Sqrt(z80*z80+4*k*(n-k)/n)
		wantLo := (2*k + z80*z80 - root) / (2 * (n + z80*z80))
		wantHi := (2*k + z80*z80 + root) / (2 * (n + z80*z80))
		lo, hi := Wilson(c.k, c.n, 0.80)
		if math.Abs(lo-wantLo) > 1e-12 || math.Abs(hi-wantHi) > 1e-12 {
			t.Errorf("Wilson(%d, %d, 0.80) = (%.15f, %.15f), want (%.15f, %.15f)", c.k, c.n, lo, hi, wantLo, wantHi)
		}
	}
}

func TestWilsonShape(t *testing.T) {
	if lo, hi := Wilson(0, 0, 0.8); lo != 0 || hi != 1 {
		t.Errorf("Wilson(0, 0) = (%v, %v), want (0, 1): no trials, no information", lo, hi)
	}
	for n := 1; n <= 60; n++ {
		for k := 0; k <= n; k++ {
			lo80, hi80 := Wilson(k, n, 0.80)
			lo95, hi95 := Wilson(k, n, 0.95)
			p := float64(k) / float64(n)
			switch {
			case !(0 <= lo80 && lo80 <= p && p <= hi80 && hi80 <= 1):
				t.Fatalf("Wilson(%d, %d, 0.80) = (%v, %v) does not hold %v inside [0, 1]", k, n, lo80, hi80, p)
			case lo95 > lo80 || hi95 < hi80:
				t.Fatalf("Wilson(%d, %d): 95%% (%v, %v) is not wider than 80%% (%v, %v)", k, n, lo95, hi95, lo80, hi80)
			case k == 0 && lo80 != 0, k == n && hi80 != 1:
				t.Fatalf("Wilson(%d, %d, 0.80) = (%v, %v): the edge must be exactly 0 or 1", k, n, lo80, hi80)
			}
			// Symmetric: failures are successes seen from the other side.
			if mlo, mhi := Wilson(n-k, n, 0.80); math.Abs(mlo-(1-hi80)) > 1e-12 || math.Abs(mhi-(1-lo80)) > 1e-12 {
				t.Fatalf("Wilson(%d, %d) and Wilson(%d, %d) are not mirror images", k, n, n-k, n)
			}
		}
	}
	// More trials at the same proportion, a narrower interval.
	lo1, hi1 := Wilson(3, 10, 0.8)
	lo2, hi2 := Wilson(30, 100, 0.8)
	if hi2-lo2 >= hi1-lo1 {
		t.Errorf("30/100 gives width %v, not narrower than 3/10's %v", hi2-lo2, hi1-lo1)
	}
}

func TestWilsonPanicsOnImpossibleInput(t *testing.T) {
	for name, call := range map[string]func(){
		"k > n":                 func() { Wilson(4, 3, 0.8) },
		"k < 0":                 func() { Wilson(-1, 3, 0.8) },
		"confidence 0":          func() { Wilson(1, 3, 0) },
		"confidence 1":          func() { Wilson(1, 3, 1) },
		"confidence 80":         func() { Wilson(1, 3, 80) },
		"confidence NaN":        func() { Wilson(1, 3, math.NaN()) },
		"n = 0, bad confidence": func() { Wilson(0, 0, 95) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			call()
		})
	}
}

func TestRate(t *testing.T) {
	tests := []struct {
		k, n int
		want string
	}{
		// 3/10 at 80%: (0.1538, 0.5026), see TestWilson80ClosedForm.
		{3, 10, "3/10 = 30% [15%, 50%]"},
		// 0/20: the upper limit is z²/(n+z²) = 1.6424/21.6424 = 0.0759.
		{0, 20, "0/20 = 0% [0%, 8%]"},
		{20, 20, "20/20 = 100% [92%, 100%]"},
		// 1/300 is not "0%", and 299/300 is not "100%": (0.0008, 0.0137) and its mirror.
		{1, 300, "1/300 = <1% [<1%, 1%]"},
		{299, 300, "299/300 = >99% [99%, >99%]"},
		{0, 0, "0/0 = n/a"},
	}
	for _, tt := range tests {
		r := NewRate(tt.k, tt.n)
		if got := r.String(); got != tt.want {
			t.Errorf("NewRate(%d, %d).String() = %q, want %q (%+v)", tt.k, tt.n, got, tt.want, r)
		}
		lo, hi := Wilson(tt.k, tt.n, DefaultConfidence)
		if r.K != tt.k || r.N != tt.n || r.Lo != lo || r.Hi != hi {
			t.Errorf("NewRate(%d, %d) = %+v, want the 80%% Wilson interval (%v, %v)", tt.k, tt.n, r, lo, hi)
		}
	}
	if r := NewRate(0, 0); r.P != 0 || math.IsNaN(r.P) {
		t.Errorf("NewRate(0, 0).P = %v, want 0 so the rate encodes as JSON", r.P)
	}
}

func TestMcNemarExact(t *testing.T) {
	tests := []struct {
		b, c int
		want float64
	}{
		{0, 0, 1},
		// Five discordant pairs all one way: 2·(1/2)^5.
		{0, 5, 2.0 / 32},
		{5, 0, 2.0 / 32},
		// 1 against 9: 2·(C(10,0) + C(10,1))/2^10.
		{1, 9, 2 * 11.0 / 1024},
		{9, 1, 2 * 11.0 / 1024},
		// 2 against 4: 2·(1 + 6 + 15)/64.
		{2, 4, 44.0 / 64},
		// An even split doubles past 1 and is capped.
		{3, 3, 1},
		{1, 0, 1},
	}
	for _, tt := range tests {
		if got := McNemarExact(tt.b, tt.c); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("McNemarExact(%d, %d) = %.15g, want %.15g", tt.b, tt.c, got, tt.want)
		}
	}
}

// Agresti A. Categorical Data Analysis (2nd ed., 2002), Table 10.1: approval of the
// President's performance in two surveys a month apart, 1600 people: (794, 150, 86, 570).
// Agresti gives McNemar's z = (86-150)/sqrt(86+150) = -4.17, p < 0.0001; the exact test
// on the 236 discordant pairs is checked here against the binomial sum done in exact
// rational arithmetic.
func TestMcNemarExactAgrestiPresidentialApproval(t *testing.T) {
	const b, c = 150, 86
	want := exactMcNemar(b, c)
	got := McNemarExact(b, c)
	if math.Abs(got-want) > 1e-9*want {
		t.Errorf("McNemarExact(%d, %d) = %.10g, want %.10g", b, c, got, want)
	}
	if got < 3.6e-5 || got > 3.8e-5 {
		t.Errorf("McNemarExact(%d, %d) = %.3g, want about 3.7e-05", b, c, got)
	}
	// The exact test agrees in magnitude with Agresti's normal approximation.
	z := float64(c-b) / math.Sqrt(b+c)
	if math.Abs(z-(-4.17)) > 0.005 {
		t.Errorf("z = %.3f, want Agresti's -4.17", z)
	}
	approx := math.Erfc(-z / math.Sqrt2)
	if got/approx < 0.5 || got/approx > 2 {
		t.Errorf("exact p %.3g is not of the magnitude of the normal approximation %.3g", got, approx)
	}
}

// exactMcNemar is 2·Σ_{i ≤ min(b,c)} C(b+c, i) / 2^(b+c) in rationals, capped at 1.
func exactMcNemar(b, c int) float64 {
	n := int64(b + c)
	sum := new(big.Int)
	for i := int64(0); i <= int64(min(b, c)); i++ {
		sum.Add(sum, new(big.Int).Binomial(n, i))
	}
	p := new(big.Rat).SetFrac(new(big.Int).Lsh(sum, 1), new(big.Int).Lsh(big.NewInt(1), uint(n)))
	f, _ := p.Float64()
	return min(1, f)
}

func TestMcNemarExactLargeCountsDoNotUnderflow(t *testing.T) {
	// 2^-10000 is far below the smallest float64; the tail is not.
	got := McNemarExact(4000, 6000)
	if !(got > 0 && got < 1e-80) {
		t.Errorf("McNemarExact(4000, 6000) = %g, want a tiny positive p", got)
	}
	if got := McNemarExact(5000, 5000); got != 1 {
		t.Errorf("McNemarExact(5000, 5000) = %g, want 1", got)
	}
	// Either side of the switch from integer sums (n ≤ 60) to the log-space recurrence.
	for _, bc := range [][2]int{{20, 40}, {25, 35}, {30, 31}, {25, 36}, {40, 60}, {100, 140}, {7, 30}} {
		if got, want := McNemarExact(bc[0], bc[1]), exactMcNemar(bc[0], bc[1]); math.Abs(got-want) > 1e-9*want {
			t.Errorf("McNemarExact(%d, %d) = %.12g, want %.12g", bc[0], bc[1], got, want)
		}
	}
}

func TestMcNemarMidP(t *testing.T) {
	tests := []struct {
		b, c int
		want float64
	}{
		{0, 0, 1},
		// 2·(1/32 - (1/32)/2).
		{0, 5, 1.0 / 32},
		// 2·(11/1024 - (10/1024)/2).
		{1, 9, 12.0 / 1024},
		{3, 3, 1},
	}
	for _, tt := range tests {
		got := McNemarMidP(tt.b, tt.c)
		if math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("McNemarMidP(%d, %d) = %.15g, want %.15g", tt.b, tt.c, got, tt.want)
		}
		if got > McNemarExact(tt.b, tt.c) {
			t.Errorf("McNemarMidP(%d, %d) = %v exceeds the exact p", tt.b, tt.c, got)
		}
	}
}

func TestFisherExact(t *testing.T) {
	tests := []struct {
		name       string
		a, b, c, d int
		want, tol  float64
	}{
		// Fisher RA (1935), The Design of Experiments, ch. II: the lady tasting tea. Of 8 cups,
		// 4 with milk first; she names 3 of them right. Two-sided p = (1+16+16+1)/70.
		{"lady tasting tea", 3, 1, 1, 3, 34.0 / 70, 1e-12},
		// Wikipedia, "Fisher's exact test", example: 1 of 10 men and 11 of 14 women studying
		// (dieting): two-sided p ≈ 0.002759. Checked tighter against the exact rational sum.
		{"Wikipedia dieting, published", 1, 9, 11, 3, 0.002759, 5e-7},
		{"Wikipedia dieting, exact", 1, 9, 11, 3, 0.0027594561852200836, 1e-12},
		// Perfect separation of 10 and 10: only the two extreme tables, 2/C(20,10).
		{"perfect separation", 10, 0, 0, 10, 2.0 / 184756, 1e-15},
		{"empty table", 0, 0, 0, 0, 1, 0},
		{"one empty row", 0, 0, 3, 5, 1, 1e-12},
		{"identical rows", 4, 6, 4, 6, 1, 1e-12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FisherExact(tt.a, tt.b, tt.c, tt.d)
			if math.Abs(got-tt.want) > tt.tol {
				t.Errorf("FisherExact(%d, %d, %d, %d) = %.12g, want %.12g", tt.a, tt.b, tt.c, tt.d, got, tt.want)
			}
			// The test does not care which group or which outcome is written first.
			for _, same := range [][4]int{{tt.c, tt.d, tt.a, tt.b}, {tt.b, tt.a, tt.d, tt.c}, {tt.a, tt.c, tt.b, tt.d}} {
				if other := FisherExact(same[0], same[1], same[2], same[3]); math.Abs(other-got) > 1e-12 {
					t.Errorf("FisherExact%v = %v, but %v for the same table written differently", same, other, got)
				}
			}
		})
	}
}

func TestCompare(t *testing.T) {
	// Bad outcome per shared seed, before and after a change.
	before := []bool{true, true, true, false, false, true}
	after := []bool{false, false, true, false, true, false}
	got, err := Compare(before, after)
	if err != nil {
		t.Fatal(err)
	}
	// Seeds 0, 1 and 5 got better, seed 4 worse: 2·P(X ≤ 1 | n=4) = 2·5/16.
	want := Paired{Better: 3, Worse: 1, Same: 2, P: 10.0 / 16, Method: MethodMcNemar}
	if got != want {
		t.Errorf("Compare = %+v, want %+v", got, want)
	}
	if _, err := Compare([]bool{true}, []bool{true, false}); err == nil || !strings.Contains(err.Error(), "shared seed") {
		t.Errorf("Compare of 1 and 2 outcomes: err = %v, want an error about shared seeds", err)
	}
	if got, err := Compare(nil, nil); err != nil || got.P != 1 {
		t.Errorf("Compare(nil, nil) = %+v, %v; want p = 1", got, err)
	}
}

func TestCompareUnpaired(t *testing.T) {
	// The lady tasting tea again, as two rates: 3/4 then 1/4.
	got := CompareUnpaired(NewRate(3, 4), NewRate(1, 4))
	if math.Abs(got.P-34.0/70) > 1e-12 || got.Method != MethodFisher || got.Before.K != 3 || got.After.K != 1 {
		t.Errorf("CompareUnpaired(3/4, 1/4) = %+v, want p = 34/70 by %q", got, MethodFisher)
	}
}

// labels expands a contingency table (rows: rater 1, columns: rater 2) into item labels.
func labels(tb testing.TB, cats []string, table [][]int) (first, second []string) {
	tb.Helper()
	if len(table) != len(cats) {
		tb.Fatalf("table has %d rows for %d categories", len(table), len(cats))
	}
	for i, row := range table {
		for j, count := range row {
			for range count {
				first = append(first, cats[i])
				second = append(second, cats[j])
			}
		}
	}
	return first, second
}

var yesNo = []string{"yes", "no"}

func TestKappaPublishedExamples(t *testing.T) {
	tests := []struct {
		name  string
		cats  []string
		table [][]int
		want  float64
		exact bool // compare for equality, not to 4 decimals
	}{
		// Wikipedia, "Cohen's kappa", simple worked example: 50 grant proposals read by two
		// readers, both yes 20, A yes B no 5, A no B yes 10, both no 15: po = 0.7, pe = 0.5,
		// kappa = 0.4.
		{"Wikipedia grant proposals", yesNo, [][]int{{20, 5}, {10, 15}}, 0.4, true},
		// Wikipedia, "Cohen's kappa", same-agreement paradox: 60 of 100 agree in both tables,
		// yet kappa is 0.1304 for (45, 15, 25, 15) and 0.2593 for (25, 35, 5, 35).
		{"Wikipedia paradox, symmetric disagreement", yesNo, [][]int{{45, 15}, {25, 15}}, 0.1304, false},
		{"Wikipedia paradox, asymmetric disagreement", yesNo, [][]int{{25, 35}, {5, 35}}, 0.2593, false},
		// SAS/STAT User's Guide, The FREQ Procedure, Getting Started: Agreement Study (skin
		// condition rated by two dermatologists, 88 patients, four categories): simple
		// kappa 0.3449.
		{"SAS skin condition", []string{"terrible", "poor", "marginal", "clear"},
			[][]int{{10, 4, 1, 0}, {5, 10, 12, 2}, {2, 4, 12, 5}, {0, 2, 6, 13}}, 0.3449, false},
		// Perfect agreement over three categories.
		{"perfect", []string{"a", "b", "c"}, [][]int{{3, 0, 0}, {0, 4, 0}, {0, 0, 2}}, 1, true},
		// Chance level: po = pe = 0.5.
		{"chance", yesNo, [][]int{{5, 5}, {5, 5}}, 0, true},
		// Always disagreeing with balanced margins: po = 0, pe = 0.5.
		{"opposite", yesNo, [][]int{{0, 5}, {5, 0}}, -1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l1, l2 := labels(t, tt.cats, tt.table)
			got, err := Kappa(l1, l2)
			if err != nil {
				t.Fatal(err)
			}
			if tt.exact && got != tt.want || !tt.exact && round4(got) != tt.want {
				t.Errorf("Kappa = %.17g, want %v", got, tt.want)
			}
			// Swapping the raters changes nothing.
			if swapped, _ := Kappa(l2, l1); math.Abs(swapped-got) > 1e-15 {
				t.Errorf("Kappa with raters swapped = %v, want %v", swapped, got)
			}
		})
	}
}

func TestKappaErrors(t *testing.T) {
	tests := []struct {
		name   string
		l1, l2 []string
		want   string
	}{
		{"different lengths", []string{"a", "b"}, []string{"a"}, "got 2 and 1 labels"},
		{"no items", nil, nil, "at least one"},
		{"one label everywhere", []string{"a", "a", "a"}, []string{"a", "a", "a"}, `all 3 items the one label "a"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Kappa(tt.l1, tt.l2); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Kappa err = %v, want one containing %q", err, tt.want)
			}
		})
	}
	// One rater constant is still defined: kappa 0 whatever the other says.
	if k, err := Kappa([]string{"a", "a", "a", "a"}, []string{"a", "b", "a", "b"}); err != nil || k != 0 {
		t.Errorf("Kappa with one constant rater = %v, %v; want 0", k, err)
	}
}

func TestKappaCI(t *testing.T) {
	l1, l2 := labels(t, yesNo, [][]int{{20, 5}, {10, 15}})
	lo, hi := KappaCI(l1, l2, 0.80, 2000, 7)

	t.Run("deterministic for a seed", func(t *testing.T) {
		if lo2, hi2 := KappaCI(l1, l2, 0.80, 2000, 7); lo2 != lo || hi2 != hi {
			t.Errorf("seed 7 gave (%v, %v) then (%v, %v)", lo, hi, lo2, hi2)
		}
		if lo3, hi3 := KappaCI(l1, l2, 0.80, 2000, 8); lo3 == lo && hi3 == hi {
			t.Errorf("seeds 7 and 8 gave the same interval (%v, %v): the seed is not used", lo, hi)
		}
	})
	t.Run("contains the estimate", func(t *testing.T) {
		if !(lo < 0.4 && 0.4 < hi) {
			t.Errorf("KappaCI = (%v, %v) does not contain kappa = 0.4", lo, hi)
		}
		if !(-1 <= lo && hi <= 1) {
			t.Errorf("KappaCI = (%v, %v) leaves [-1, 1]", lo, hi)
		}
	})
	t.Run("narrower with more data", func(t *testing.T) {
		// The same table four times over: kappa is still 0.4, known four times better.
		m1, m2 := labels(t, yesNo, [][]int{{80, 20}, {40, 60}})
		if k, _ := Kappa(m1, m2); math.Abs(k-0.4) > 1e-15 {
			t.Fatalf("kappa of the scaled table = %v, want 0.4", k)
		}
		mlo, mhi := KappaCI(m1, m2, 0.80, 2000, 7)
		if !(mlo < 0.4 && 0.4 < mhi) || mhi-mlo >= hi-lo {
			t.Errorf("200 items: (%v, %v), not inside 50 items' (%v, %v) width", mlo, mhi, lo, hi)
		}
		// Roughly half as wide, as the square root of four says.
		if r := (mhi - mlo) / (hi - lo); r < 0.35 || r > 0.65 {
			t.Errorf("width ratio 200/50 items = %.2f, want about 0.5", r)
		}
	})
	t.Run("wider at higher confidence", func(t *testing.T) {
		lo95, hi95 := KappaCI(l1, l2, 0.95, 2000, 7)
		if lo95 > lo || hi95 < hi {
			t.Errorf("95%% (%v, %v) is not wider than 80%% (%v, %v)", lo95, hi95, lo, hi)
		}
	})
	t.Run("agrees with the published asymptotic interval", func(t *testing.T) {
		// SAS's Agreement Study (see TestKappaPublishedExamples) prints the asymptotic 95%
		// interval (0.2030, 0.4868) for kappa 0.3449. With 88 items and a kappa far from
		// ±1 the bootstrap should land within a few hundredths of it.
		s1, s2 := labels(t, []string{"terrible", "poor", "marginal", "clear"},
			[][]int{{10, 4, 1, 0}, {5, 10, 12, 2}, {2, 4, 12, 5}, {0, 2, 6, 13}})
		slo, shi := KappaCI(s1, s2, 0.95, 4000, 1)
		if math.Abs(slo-0.2030) > 0.02 || math.Abs(shi-0.4868) > 0.02 {
			t.Errorf("bootstrap 95%% = (%.4f, %.4f), want near SAS's (0.2030, 0.4868)", slo, shi)
		}
	})
	t.Run("perfect agreement", func(t *testing.T) {
		// Resamples that draw a single category are undefined and left out; the rest are 1.
		p1, p2 := labels(t, yesNo, [][]int{{3, 0}, {0, 3}})
		if plo, phi := KappaCI(p1, p2, 0.80, 500, 1); plo != 1 || phi != 1 {
			t.Errorf("KappaCI of perfect agreement = (%v, %v), want (1, 1)", plo, phi)
		}
	})
	t.Run("unusable input", func(t *testing.T) {
		for name, got := range map[string][2]float64{
			"lengths differ": pair(KappaCI([]string{"a"}, nil, 0.8, 100, 1)),
			"no items":       pair(KappaCI(nil, nil, 0.8, 100, 1)),
			"one label":      pair(KappaCI([]string{"a", "a"}, []string{"a", "a"}, 0.8, 100, 1)),
			"no reps":        pair(KappaCI(l1, l2, 0.8, 0, 1)),
			"confidence 80":  pair(KappaCI(l1, l2, 80, 100, 1)),
		} {
			if !math.IsNaN(got[0]) || !math.IsNaN(got[1]) {
				t.Errorf("%s: KappaCI = %v, want NaN, NaN", name, got)
			}
		}
	})
}

func pair(a, b float64) [2]float64 { return [2]float64{a, b} }

func TestQuantile(t *testing.T) {
	// R: quantile(c(1, 2, 3, 4, 10), c(0, .1, .5, .9, 1), type = 7) = 1.0 1.4 3.0 7.6 10.0
	v := []float64{1, 2, 3, 4, 10}
	for q, want := range map[float64]float64{0: 1, 0.1: 1.4, 0.5: 3, 0.9: 7.6, 1: 10} {
		if got := quantile(v, q); math.Abs(got-want) > 1e-12 {
			t.Errorf("quantile(%v, %v) = %v, want %v", v, q, got, want)
		}
	}
	if got := quantile([]float64{0.3}, 0.1); got != 0.3 {
		t.Errorf("quantile of one value = %v, want it", got)
	}
}

func TestDirectionMatrix(t *testing.T) {
	truth := []string{ClaimSuccess, ClaimSuccess, ClaimFailure, ClaimFailure, ClaimFailure, ClaimUnclear}
	judged := []string{ClaimSuccess, ClaimFailure, ClaimSuccess, ClaimSuccess, ClaimFailure, ClaimFailure}
	want := map[string]map[string]int{
		ClaimSuccess: {ClaimSuccess: 1, ClaimFailure: 1},
		// Two failures read as "done": the direction that hides silent wrongs.
		ClaimFailure: {ClaimSuccess: 2, ClaimFailure: 1},
		ClaimUnclear: {ClaimFailure: 1},
	}
	if got := DirectionMatrix(truth, judged); !reflect.DeepEqual(got, want) {
		t.Errorf("DirectionMatrix = %v, want %v", got, want)
	}
	if got := DirectionMatrix(nil, nil); len(got) != 0 {
		t.Errorf("DirectionMatrix(nil, nil) = %v, want empty", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("DirectionMatrix of 2 and 1 labels did not panic")
		}
	}()
	DirectionMatrix([]string{"a", "b"}, []string{"a"})
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }
