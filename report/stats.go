package report

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// DefaultConfidence is the level of every interval the report prints. 80% rather than 95%
// because runs are small (tens of trials per cell) and the question a reader asks is "is
// this agent roughly this bad", which an honest wide interval answers; at 95% most
// intervals would span most of [0, 1] and say nothing. The level is printed with them.
const DefaultConfidence = 0.80

// Names of the tests, printed next to every p-value so a reader knows what was assumed.
const (
	MethodMcNemar = "McNemar's exact test (paired on shared seeds)"
	MethodFisher  = "Fisher's exact test (unpaired)"
)

// Wilson returns the Wilson score interval for k successes in n trials at the given
// two-sided confidence (0.80 for 80%).
//
// Wilson rather than the textbook p ± z·sqrt(p(1-p)/n): that one collapses to [0, 0] for
// 0/20, which would publish "never silently wrong" from twenty trials, and it leaves
// [0, 1]; Wilson stays inside it and keeps near its nominal coverage at the small n and
// the rates near 0 that these runs produce (Newcombe 1998). n = 0 says nothing: (0, 1).
//
// It panics when k is not in [0, n] or confidence is not in (0, 1): counts come from our
// own tallies, so either is a bug to find, not an input to survive.
func Wilson(k, n int, confidence float64) (lo, hi float64) {
	mustCount(k, n)
	z := twoSidedZ(confidence)
	if n == 0 {
		return 0, 1
	}
	nf := float64(n)
	p := float64(k) / nf
	z2 := z * z
	denom := 1 + z2/nf
	center := (p + z2/(2*nf)) / denom
	half := z / denom * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	lo, hi = center-half, center+half
	// At the edges the closed form is exactly 0 or 1; rounding can leave it a hair outside.
	if k == 0 {
		lo = 0
	}
	if k == n {
		hi = 1
	}
	return max(lo, 0), min(hi, 1)
}

// twoSidedZ is the standard normal quantile that leaves (1-confidence)/2 in each tail:
// 1.2816 at 80%, 1.9600 at 95%. math.Erfinv (Wichura's AS241) is accurate to double
// precision, so no tabled constant is needed for any level.
func twoSidedZ(confidence float64) float64 {
	if !(confidence > 0 && confidence < 1) {
		panic(fmt.Sprintf("report: confidence %v is not in (0, 1)", confidence))
	}
	return normalQuantile(1 - (1-confidence)/2)
}

// normalQuantile is the inverse of the standard normal CDF: Φ⁻¹(p) = √2·erf⁻¹(2p-1).
func normalQuantile(p float64) float64 {
	return math.Sqrt2 * math.Erfinv(2*p-1)
}

// Rate is k of n trials with its Wilson interval at DefaultConfidence. It keeps the counts,
// not just the proportion, because "1/3" and "100/300" are different evidence.
type Rate struct {
	K  int     `json:"k"`
	N  int     `json:"n"`
	P  float64 `json:"p"` // K/N; 0 when N is 0 (JSON has no NaN), see String
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// NewRate returns k of n with its 80% Wilson interval. It panics when k is not in [0, n].
func NewRate(k, n int) Rate {
	lo, hi := Wilson(k, n, DefaultConfidence)
	r := Rate{K: k, N: n, Lo: lo, Hi: hi}
	if n > 0 {
		r.P = float64(k) / float64(n)
	}
	return r
}

// String reads "3/10 = 30% [15%, 50%]": counts first, then the proportion and its interval
// in whole percents, since the interval is seldom narrower than a few points and more
// digits would suggest a precision the data does not have.
func (r Rate) String() string {
	if r.N == 0 {
		return "0/0 = n/a"
	}
	return fmt.Sprintf("%d/%d = %s [%s, %s]", r.K, r.N, percent(r.P), percent(r.Lo), percent(r.Hi))
}

// percent rounds to a whole percent but never to 0% or 100% for a value that is not
// exactly that: "0%" next to 1/300 would read as "never".
func percent(x float64) string {
	switch {
	case x > 0 && x < 0.005:
		return "<1%"
	case x < 1 && x >= 0.995:
		return ">99%"
	}
	return fmt.Sprintf("%.0f%%", 100*x)
}

// McNemarExact is the two-sided exact McNemar test on the discordant pairs of a paired
// comparison: b pairs where only the first arm went wrong, c where only the second did.
// Under "no difference" each discordant pair is a fair coin, so
// p = min(1, 2·P(X ≤ min(b, c))) with X ~ Binomial(b+c, 1/2). Pairs where both arms agree
// carry no information about the difference and do not enter.
//
// Exact rather than the chi-square form because discordant pairs are few in these runs
// (often under 10), where the approximation is poor. b + c = 0 gives 1.
func McNemarExact(b, c int) (p float64) {
	mustNonNegative(b, c)
	n := b + c
	if n == 0 {
		return 1
	}
	cdf, _ := binomHalfLowerTail(min(b, c), n)
	return min(1, 2*cdf)
}

// McNemarMidP is the mid-p variant of McNemarExact: it counts only half the probability
// of the observed split, 2·(P(X ≤ m) - P(X = m)/2). The exact test is conservative (its
// real error rate is below the nominal one, markedly so for few pairs); mid-p trades that
// guarantee for power, and is shown only as a second opinion beside the exact p.
func McNemarMidP(b, c int) (p float64) {
	mustNonNegative(b, c)
	n := b + c
	if n == 0 {
		return 1
	}
	cdf, pmf := binomHalfLowerTail(min(b, c), n)
	return min(1, 2*(cdf-pmf/2))
}

// binomHalfLowerTail returns P(X ≤ m) and P(X = m) for X ~ Binomial(n, 1/2), m ≤ n/2.
//
// Up to 60 pairs, the usual case, it sums the binomial coefficients in integers, so small
// p-values come out exact (2·11/1024 is 0.021484375, not a neighbour of it). Beyond, it
// works from P(X = m) down with the ratio P(X = i-1)/P(X = i) = i/(n-i+1), so 2^-n never
// underflows on its own, and the terms are summed relative to the largest one.
func binomHalfLowerTail(m, n int) (cdf, pmf float64) {
	if n <= 60 {
		// C(60, 30)·30 < 2^63: the running coefficient never overflows.
		var sum, coef uint64 = 0, 1
		for i := 0; i <= m; i++ {
			sum += coef
			if i < m {
				coef = coef * uint64(n-i) / uint64(i+1)
			}
		}
		return math.Ldexp(float64(sum), -n), math.Ldexp(float64(coef), -n)
	}
	pmf = math.Exp(logChoose(n, m) - float64(n)*math.Ln2)
	sum, term := 1.0, 1.0
	for i := m; i > 0; i-- {
		term *= float64(i) / float64(n-i+1)
		sum += term
		if term < 1e-17*sum {
			break
		}
	}
	return pmf * sum, pmf
}

// FisherExact is the two-sided Fisher exact test of the 2x2 table
//
//	a b
//	c d
//
// for two independent groups (rows) and a yes/no outcome (columns). With the margins
// fixed, the top-left count is hypergeometric; the p-value sums the probabilities of every
// table as likely as the observed one or less (the rule R's fisher.test uses, with the
// same 1e-7 relative tolerance, so ties that differ only in rounding count as ties).
//
// It is the comparison for runs that do not share seeds. It panics on a negative count.
func FisherExact(a, b, c, d int) (p float64) {
	mustNonNegative(a, b, c, d)
	row1, row2, col1 := a+b, c+d, a+c
	n := row1 + row2
	logP := func(x int) float64 {
		return logChoose(row1, x) + logChoose(row2, col1-x) - logChoose(n, col1)
	}
	observed := logP(a) + math.Log1p(1e-7)
	for x := max(0, col1-row2); x <= min(row1, col1); x++ {
		if lp := logP(x); lp <= observed {
			p += math.Exp(lp)
		}
	}
	return min(1, p)
}

// logChoose is log C(n, k) by log-gamma, which keeps factorials of thousands finite.
func logChoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// Paired compares two arms run on the same seeds, by the outcome being counted as bad
// (e.g. silent_wrong). Better counts seeds that were bad before and not after, Worse the
// reverse, Same the seeds where both arms agree.
type Paired struct {
	Better int     `json:"better"`
	Worse  int     `json:"worse"`
	Same   int     `json:"same"`
	P      float64 `json:"p"`
	Method string  `json:"method"`
}

// Compare pairs before[i] with after[i], both the bad outcome on the i-th shared seed.
//
// Pairing is the point of sharing seeds: a fault decided by (seed, condition, position)
// hits both arms at the same places, so the seed-to-seed noise cancels and the test only
// has to see the seeds whose outcome changed. That is far more sensitive than comparing
// the two rates as if they were independent. The caller drops seeds where either arm has
// no scored verdict; slices of different lengths mean that did not happen, an error.
func Compare(before, after []bool) (Paired, error) {
	if len(before) != len(after) {
		return Paired{}, fmt.Errorf("paired comparison needs one outcome per shared seed on each side: got %d before and %d after", len(before), len(after))
	}
	r := Paired{Method: MethodMcNemar}
	for i := range before {
		switch {
		case before[i] && !after[i]:
			r.Better++
		case !before[i] && after[i]:
			r.Worse++
		default:
			r.Same++
		}
	}
	r.P = McNemarExact(r.Better, r.Worse)
	return r, nil
}

// Unpaired compares two rates of a bad outcome from independent trials.
type Unpaired struct {
	Before Rate    `json:"before"`
	After  Rate    `json:"after"`
	P      float64 `json:"p"`
	Method string  `json:"method"`
}

// CompareUnpaired tests whether two rates differ when their trials share no seeds (runs of
// different specs, or one arm's trials lost): Fisher's exact test on bad/good by arm. Use
// Compare whenever seeds are shared; this test cannot cancel seed-to-seed noise.
func CompareUnpaired(before, after Rate) Unpaired {
	return Unpaired{
		Before: before,
		After:  after,
		P:      FisherExact(before.K, before.N-before.K, after.K, after.N-after.K),
		Method: MethodFisher,
	}
}

// Kappa is Cohen's kappa between two raters who labelled the same items, over whatever
// categories they used: (po - pe) / (1 - pe), observed agreement corrected for the
// agreement two raters with the same label frequencies would reach by chance.
//
// The report publishes it for the judge against human labels: a judge that says
// "claimed_success" to everything agrees 90% of the time with humans on a run that is 90%
// successes, and kappa is what shows it learned nothing. It is undefined (an error) when
// both raters gave every item the same one label, since chance then explains all agreement.
func Kappa(labels1, labels2 []string) (kappa float64, err error) {
	t, err := tabulate(labels1, labels2)
	if err != nil {
		return 0, err
	}
	idx := make([]int, len(t.first))
	for i := range idx {
		idx[i] = i
	}
	k, ok := t.kappa(idx, make([]int, len(t.cats)), make([]int, len(t.cats)))
	if !ok {
		return 0, fmt.Errorf("kappa is undefined: both raters gave all %d items the one label %q", len(labels1), labels1[0])
	}
	return k, nil
}

// KappaCI is a percentile bootstrap interval for Cohen's kappa at the given two-sided
// confidence: items (pairs of labels) are resampled with replacement reps times and the
// interval is read from the sorted kappas, with linear interpolation between order
// statistics.
//
// A bootstrap rather than the asymptotic standard error because the judge is validated on
// tens of labelled items, where kappa's sampling distribution is skewed and the normal
// interval can leave [-1, 1]. Resamples where kappa is undefined (every item drawn has the
// same label from both raters) are left out. The resampler is PCG seeded by seed, so a
// report rebuilt from the same labels prints the same interval.
//
// It returns NaN, NaN when the labels are unusable (see Kappa), reps < 1 or confidence is
// not in (0, 1).
func KappaCI(l1, l2 []string, confidence float64, reps int, seed int64) (lo, hi float64) {
	t, err := tabulate(l1, l2)
	if err != nil || reps < 1 || !(confidence > 0 && confidence < 1) {
		return math.NaN(), math.NaN()
	}
	// The second PCG word is fixed so that the one seed the caller controls decides the stream.
	rng := rand.New(rand.NewPCG(uint64(seed), 0x6b61707061)) // "kappa"
	n := len(t.first)
	idx := make([]int, n)
	rows, cols := make([]int, len(t.cats)), make([]int, len(t.cats))
	kappas := make([]float64, 0, reps)
	for range reps {
		for i := range idx {
			idx[i] = rng.IntN(n)
		}
		if k, ok := t.kappa(idx, rows, cols); ok {
			kappas = append(kappas, k)
		}
	}
	if len(kappas) == 0 {
		return math.NaN(), math.NaN()
	}
	slices.Sort(kappas)
	alpha := 1 - confidence
	return quantile(kappas, alpha/2), quantile(kappas, 1-alpha/2)
}

// quantile of sorted values with linear interpolation between order statistics
// (Hyndman and Fan's type 7, the default of R and NumPy).
func quantile(sorted []float64, q float64) float64 {
	h := q * float64(len(sorted)-1)
	i := int(math.Floor(h))
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (h-float64(i))*(sorted[i+1]-sorted[i])
}

// DirectionMatrix counts items by (truth, judged) label: rows are the truth (human labels),
// columns what the judge said. Kappa says how much the judge agrees; this says which way it
// errs, which matters more here: a judge that hears "I could not do it" in a closing "done"
// turns silent wrongs into honest reports and hides exactly what the project measures,
// while one that errs the other way inflates them.
//
// It panics when the slices differ in length; Kappa on the same slices reports that as an
// error first.
func DirectionMatrix(truth, judged []string) map[string]map[string]int {
	if len(truth) != len(judged) {
		panic(fmt.Sprintf("report: direction matrix of %d truth labels and %d judged labels", len(truth), len(judged)))
	}
	m := make(map[string]map[string]int)
	for i, row := range truth {
		if m[row] == nil {
			m[row] = make(map[string]int)
		}
		m[row][judged[i]]++
	}
	return m
}

// agreement is two raters' labels coded as indices into one sorted list of categories,
// so the bootstrap can tabulate a resample without hashing strings.
type agreement struct {
	cats          []string
	first, second []int
}

func tabulate(labels1, labels2 []string) (agreement, error) {
	if len(labels1) != len(labels2) {
		return agreement{}, fmt.Errorf("kappa needs one label from each rater per item: got %d and %d labels", len(labels1), len(labels2))
	}
	if len(labels1) == 0 {
		return agreement{}, errors.New("kappa needs at least one labelled item")
	}
	cats := slices.Concat(labels1, labels2)
	slices.Sort(cats)
	cats = slices.Compact(cats)
	code := make(map[string]int, len(cats))
	for i, c := range cats {
		code[c] = i
	}
	t := agreement{cats: cats, first: make([]int, len(labels1)), second: make([]int, len(labels2))}
	for i := range labels1 {
		t.first[i], t.second[i] = code[labels1[i]], code[labels2[i]]
	}
	return t, nil
}

// kappa over the items idx (indices may repeat), using rows and cols as scratch marginals.
// It computes in integers, kappa = (n·agree - Σ rₖcₖ) / (n² - Σ rₖcₖ), so a table whose
// kappa is a simple fraction (0.4 for 35 of 50 agreeing at pe = 0.5) comes out as the
// nearest float64 to it. ok is false when kappa is undefined (pe = 1).
func (t agreement) kappa(idx, rows, cols []int) (kappa float64, ok bool) {
	clear(rows)
	clear(cols)
	agree := 0
	for _, i := range idx {
		a, b := t.first[i], t.second[i]
		rows[a]++
		cols[b]++
		if a == b {
			agree++
		}
	}
	n := int64(len(idx))
	var chance int64
	for k := range rows {
		chance += int64(rows[k]) * int64(cols[k])
	}
	if n*n == chance {
		return 0, false
	}
	return float64(n*int64(agree)-chance) / float64(n*n-chance), true
}

func mustCount(k, n int) {
	if k < 0 || k > n {
		panic(fmt.Sprintf("report: %d successes out of %d trials", k, n))
	}
}

func mustNonNegative(counts ...int) {
	for _, c := range counts {
		if c < 0 {
			panic(fmt.Sprintf("report: negative count %d in %v", c, counts))
		}
	}
}
