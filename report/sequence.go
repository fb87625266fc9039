package report

import (
	"fmt"
	"math"
)

// Sequence is the anytime-valid confidence sequence for a binomial rate: after k bad
// outcomes in n trials, the rates p under which the beta-binomial mixture
//
//	M_n(p) = B(a+k, b+n-k) / B(a, b) / (p^k (1-p)^(n-k))     (a = b = 1/2)
//
// is still below 1/alpha. M_n(p) is a nonnegative martingale with M_0 = 1 when p is the
// true rate, so by Ville's inequality it ever reaches 1/alpha with probability at most
// alpha: the interval covers the true rate at every n at once, with probability at least
// 1-alpha, whenever the run stops, however the stopping depends on what was seen (Robbins
// 1970, "Statistical methods related to the law of the iterated logarithm"; Howard,
// Ramdas, McAuliffe and Sekhon 2021, "Time-uniform, nonparametric, nonasymptotic
// confidence sequences", Annals of Statistics 49(2)). A Wilson interval holds only at an n
// fixed before the run: computed after every trial and acted on (stop once it looks
// settled), it misses the true rate far more often than its level says
// (TestSequenceCoverage shows it). The price is width: at n = 10 the sequence is about
// twice as wide as Wilson's interval.
func Sequence(k, n int, confidence float64) (lo, hi float64) {
	mustCount(k, n)
	if !(confidence > 0 && confidence < 1) {
		panic(fmt.Sprintf("report: confidence %v is not in (0, 1)", confidence))
	}
	if n == 0 {
		return 0, 1
	}
	const a, b = 0.5, 0.5
	threshold := math.Log(1 / (1 - confidence))
	lnB := func(x, y float64) float64 {
		gx, _ := math.Lgamma(x)
		gy, _ := math.Lgamma(y)
		gxy, _ := math.Lgamma(x + y)
		return gx + gy - gxy
	}
	c := lnB(a+float64(k), b+float64(n-k)) - lnB(a, b)
	// logM is convex in p with its minimum (at most 0) at k/n, so the set below the
	// threshold is an interval: each end found by bisection on its side.
	logM := func(p float64) float64 {
		v := c
		if k > 0 {
			v -= float64(k) * math.Log(p)
		}
		if n-k > 0 {
			v -= float64(n-k) * math.Log1p(-p)
		}
		return v
	}
	mid := float64(k) / float64(n)
	bisect := func(inside, outside float64) float64 {
		for range 100 {
			m := (inside + outside) / 2
			if logM(m) < threshold {
				inside = m
			} else {
				outside = m
			}
		}
		return inside
	}
	lo, hi = 0, 1
	if k > 0 && logM(0) >= threshold {
		lo = bisect(mid, 0)
	}
	if k < n && logM(1) >= threshold {
		hi = bisect(mid, 1)
	}
	return lo, hi
}

// FixedWidth is the width of the widest 80% Wilson interval a fixed 10 trials give (5 of
// 10): the width an adaptive run aims for by default, so that it answers as precisely as
// --reps 10 would, with the trials that question needs.
func FixedWidth() float64 {
	lo, hi := Wilson(5, 10, DefaultConfidence)
	return hi - lo
}

// StopRule is when an adaptive run stops giving a cell and condition more trials: its
// question is answered. Interval computes the interval after k bad of n (Sequence at the
// run's confidence; a Wilson interval here is the mistake TestSequenceCoverage shows).
type StopRule struct {
	// Width: stop once the interval is at most this wide (0: never on width).
	Width float64
	// Bars are the gates' thresholds: stop once the interval lies wholly on one side of
	// every bar (the gate is decided either way).
	Bars []float64
	// Cap is the most trials (replicates) a cell and condition gets.
	Cap int
	// Interval is the interval the rule reads.
	Interval func(k, n int) (lo, hi float64)
}

// Stop says whether k bad of n answers the question, and why.
func (r StopRule) Stop(k, n int) (bool, string) {
	if r.Cap > 0 && n >= r.Cap {
		return true, fmt.Sprintf("the cap of %d trials", r.Cap)
	}
	if n == 0 {
		return false, ""
	}
	lo, hi := r.Interval(k, n)
	if r.Width > 0 && hi-lo <= r.Width {
		return true, fmt.Sprintf("its interval is %.0f points wide, at most the %.0f asked", 100*(hi-lo), 100*r.Width)
	}
	if len(r.Bars) > 0 {
		decided := true
		for _, b := range r.Bars {
			if lo <= b && b <= hi {
				decided = false
			}
		}
		if decided {
			return true, "every gate is decided"
		}
	}
	return false, ""
}
