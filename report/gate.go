package report

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/crashwall/chaos/run"
)

// Gate is a bar a run must clear, as CI takes it: `silent_wrong<=5%` says no cell and
// condition may have a silent-wrong rate above 5%. Outcome is a verdict or an outcome the
// spec declares; Op one of <=, <, >=, >; Bar a share in [0, 1].
type Gate struct {
	Text    string  `json:"gate"`
	Outcome string  `json:"outcome"`
	Op      string  `json:"op"`
	Bar     float64 `json:"bar"`
}

// ParseGate reads `OUTCOME OP BAR`, BAR a percent (5%) or a share (0.05).
func ParseGate(s string) (Gate, error) {
	text := strings.TrimSpace(s)
	i := strings.IndexAny(text, "<>")
	if i <= 0 {
		return Gate{}, fmt.Errorf("gate %q: want OUTCOME<=BAR, OUTCOME<BAR, OUTCOME>=BAR or OUTCOME>BAR, such as silent_wrong<=5%%", s)
	}
	g := Gate{Text: text, Outcome: strings.TrimSpace(text[:i]), Op: text[i : i+1]}
	rest := text[i+1:]
	if strings.HasPrefix(rest, "=") {
		g.Op += "="
		rest = rest[1:]
	}
	rest = strings.TrimSpace(rest)
	pct := strings.HasSuffix(rest, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(rest, "%"), 64)
	if err != nil {
		return Gate{}, fmt.Errorf("gate %q: the bar %q is not a number (5%% or 0.05)", s, rest)
	}
	if pct {
		v /= 100
	}
	if !(v >= 0 && v <= 1) {
		return Gate{}, fmt.Errorf("gate %q: the bar must be between 0%% and 100%%", s)
	}
	g.Bar = v
	return g, nil
}

// GateOutcomes are the outcomes a gate may name in a run that declares declared: every
// verdict, then the spec's outcomes.
func GateOutcomes(declared OutcomeNames) []string {
	return append(Verdicts(), append(slices.Clone(declared.Failures), declared.Successes...)...)
}

// GateResult is one gate on one cell and condition: the rate it read, the interval, and
// the call: "fail" when the interval lies wholly on the wrong side of the bar (the
// evidence says the bar is broken at the run's confidence), "pass" when wholly on the
// right side, else "undecided" (too few trials to tell; never a failure).
type GateResult struct {
	Gate      Gate    `json:"gate"`
	Cell      string  `json:"cell"`
	Condition string  `json:"condition"`
	K         int     `json:"k"`
	N         int     `json:"n"`
	Lo        float64 `json:"lo"`
	Hi        float64 `json:"hi"`
	Call      string  `json:"call"`
}

func (r GateResult) String() string {
	return fmt.Sprintf("%s %s: %s %d/%d, %.0f%% confidence sequence [%s, %s]: %s",
		r.Cell, r.Condition, r.Gate.Outcome, r.K, r.N, 100*DefaultConfidence, percent(r.Lo), percent(r.Hi), r.Call)
}

// EvaluateGates judges each gate on each cell and condition of results. The interval is
// the anytime-valid confidence sequence (Sequence), valid whether the run ran a fixed
// number of trials or stopped as soon as it knew. A verdict's share is over the scored
// trials (as the headline's silent-wrong rate) for a scored verdict, over all trials
// for no_verdict and not_triggered; a declared outcome's over the trials it was read in,
// counting its bad side (a failure that held, a success that did not).
func EvaluateGates(gates []Gate, results []run.TrialResult, declared OutcomeNames) []GateResult {
	type key struct{ cell, cond string }
	groups := map[key][]run.TrialResult{}
	var keys []key
	for _, t := range results {
		k := key{t.Cell, t.Condition}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], t)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].cell != keys[j].cell {
			return keys[i].cell < keys[j].cell
		}
		return keys[i].cond < keys[j].cond
	})
	var out []GateResult
	for _, g := range gates {
		failure := slices.Contains(declared.Failures, g.Outcome)
		success := slices.Contains(declared.Successes, g.Outcome)
		for _, k := range keys {
			r := GateResult{Gate: g, Cell: k.cell, Condition: k.cond}
			for _, t := range groups[k] {
				switch {
				case failure || success:
					held, ok := t.Outcomes[g.Outcome]
					if !ok || t.Verdict == NoVerdict {
						continue
					}
					r.N++
					if held == failure {
						r.K++
					}
				case Scored(g.Outcome):
					if !Scored(t.Verdict) {
						continue
					}
					r.N++
					if t.Verdict == g.Outcome {
						r.K++
					}
				default:
					r.N++
					if verdictOf(t) == g.Outcome {
						r.K++
					}
				}
			}
			if r.N == 0 {
				continue
			}
			r.Lo, r.Hi = Sequence(r.K, r.N, DefaultConfidence)
			r.Call = judgeGate(g, r.Lo, r.Hi)
			out = append(out, r)
		}
	}
	return out
}

// judgeGate calls a gate on an interval [lo, hi].
func judgeGate(g Gate, lo, hi float64) string {
	var fail, pass bool
	switch g.Op {
	case "<=":
		fail, pass = lo > g.Bar, hi <= g.Bar
	case "<":
		fail, pass = lo >= g.Bar, hi < g.Bar
	case ">=":
		fail, pass = hi < g.Bar, lo >= g.Bar
	case ">":
		fail, pass = hi <= g.Bar, lo > g.Bar
	}
	switch {
	case fail:
		return "fail"
	case pass:
		return "pass"
	}
	return "undecided"
}
