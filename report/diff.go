package report

import (
	"errors"
	"fmt"
	"sort"

	"github.com/crashwall/chaos/run"
)

// Alpha is the significance level below which a difference is called better or worse.
const Alpha = 0.05

// ErrNoSharedSeeds means two runs cannot be compared paired: no trial of one has a trial
// of the other with the same cell, condition, replicate and seed.
var ErrNoSharedSeeds = errors.New("the runs share no seeds, so they cannot be compared paired")

// DiffRow is one condition (in one cell) compared between run A and run B by the share of
// trials with the bad outcome (silent_wrong).
type DiffRow struct {
	Cell      string `json:"cell"`
	Condition string `json:"condition"`
	// Outcome is the declared outcome the row compares ("": the silent-wrong rate).
	Outcome string `json:"outcome,omitempty"`
	A       Rate   `json:"a"`
	B       Rate   `json:"b"`
	// Better, Worse, Same count shared seeds (paired) where B is better, worse or the same.
	Better int     `json:"better,omitempty"`
	Worse  int     `json:"worse,omitempty"`
	Same   int     `json:"same,omitempty"`
	P      float64 `json:"p"`
	Method string  `json:"method"`
	// Call is "better", "worse" or "same": B against A, at Alpha; for a verdict's share
	// (DiffVerdicts) "more", "fewer" or "same", since more of a verdict is not always worse.
	Call string `json:"call"`
}

// Diff compares run B with run A per cell and condition. Paired (McNemar's exact test on
// the seeds both runs share) unless unpaired is set; paired with no shared seed at all is
// ErrNoSharedSeeds.
func Diff(a, b *Run, unpaired bool) ([]DiffRow, error) {
	return diffBy(a, b, unpaired, "", func(t run.TrialResult) (bool, bool) {
		return Scored(t.Verdict), t.Verdict == SilentWrong
	})
}

// DiffOutcomes compares, per cell, condition and declared outcome (the spec's outcomes,
// as B's manifest lists them), how often run B ended on the bad side of the outcome
// against run A: a failure that held, or a success that did not. Every trial whose
// outcomes were read counts, the ones in which the fault never fired (not_triggered)
// included, as in AgentChaos's diff: a declared outcome is the run's result whether or
// not the fault met the trial, and leaving those trials out would make a run faulted at
// rate 0.5 look like one faulted at rate 1. Paired, McNemar on the discordant pairs of
// every shared seed. No declared outcome: no rows.
func DiffOutcomes(a, b *Run, unpaired bool) ([]DiffRow, error) {
	var rows []DiffRow
	kinds := []struct {
		names   []string
		failure bool
	}{{b.Manifest.Outcomes.Failures, true}, {b.Manifest.Outcomes.Successes, false}}
	for _, k := range kinds {
		for _, name := range k.names {
			rs, err := diffBy(a, b, unpaired, name, func(t run.TrialResult) (bool, bool) {
				held, ok := t.Outcomes[name]
				return ok && t.Verdict != NoVerdict, held == k.failure
			})
			if err != nil {
				return nil, err
			}
			rows = append(rows, rs...)
		}
	}
	return rows, nil
}

// DiffVerdicts compares, per cell and condition, the share of every verdict either run
// gave (no_verdict and unclear included) among all trials of the condition: a fault that
// leaves every trial unclear, or a change that makes an agent crash, shows here although
// no trial of it was scored. Paired, McNemar on every shared seed; Call is "more",
// "fewer" or "same" (B against A, at Alpha).
func DiffVerdicts(a, b *Run, unpaired bool) ([]DiffRow, error) {
	seen := map[string]bool{}
	for _, r := range []*Run{a, b} {
		for _, t := range r.Results {
			seen[verdictOf(t)] = true
		}
	}
	verdicts := make([]string, 0, len(seen))
	for v := range seen {
		verdicts = append(verdicts, v)
	}
	sort.Strings(verdicts)
	var rows []DiffRow
	for _, v := range verdicts {
		rs, err := diffBy(a, b, unpaired, v, func(t run.TrialResult) (bool, bool) {
			return true, verdictOf(t) == v
		})
		if err != nil {
			return nil, err
		}
		for i := range rs {
			switch rs[i].Call {
			case "worse":
				rs[i].Call = "more"
			case "better":
				rs[i].Call = "fewer"
			}
		}
		rows = append(rows, rs...)
	}
	return rows, nil
}

// verdictOf is a trial's verdict, no_verdict for one that has none.
func verdictOf(t run.TrialResult) string {
	if t.Verdict == "" {
		return NoVerdict
	}
	return t.Verdict
}

// diffBy compares the share of bad trials per cell and condition; judge says whether a
// trial counts and whether it is bad. outcome names the rows.
func diffBy(a, b *Run, unpaired bool, outcome string, judge func(run.TrialResult) (counted, bad bool)) ([]DiffRow, error) {
	type key struct{ cell, cond string }
	type pairKey struct {
		cell, cond string
		rep        int
		seed       int64
	}
	index := func(r *Run) (map[key][]run.TrialResult, map[pairKey]run.TrialResult) {
		groups := map[key][]run.TrialResult{}
		byPair := map[pairKey]run.TrialResult{}
		for _, t := range r.Results {
			groups[key{t.Cell, t.Condition}] = append(groups[key{t.Cell, t.Condition}], t)
			byPair[pairKey{t.Cell, t.Condition, t.Rep, t.Seed}] = t
		}
		return groups, byPair
	}
	ga, pa := index(a)
	gb, pb := index(b)
	var keys []key
	for k := range ga {
		if _, ok := gb[k]; ok {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].cell != keys[j].cell {
			return keys[i].cell < keys[j].cell
		}
		return keys[i].cond < keys[j].cond
	})
	rate := func(ts []run.TrialResult) Rate {
		k, n := 0, 0
		for _, t := range ts {
			if counted, bad := judge(t); counted {
				n++
				if bad {
					k++
				}
			}
		}
		return NewRate(k, n)
	}
	// shared counts the seeds both runs have, whether or not their trials count here: two
	// runs that share seeds are paired even when no trial of one side was scored.
	shared := 0
	var rows []DiffRow
	for _, k := range keys {
		row := DiffRow{Cell: k.cell, Condition: k.cond, Outcome: outcome, A: rate(ga[k]), B: rate(gb[k])}
		if unpaired {
			u := CompareUnpaired(row.A, row.B)
			row.P, row.Method = u.P, u.Method
			row.Call = call(row.P, row.B.P-row.A.P)
		} else {
			var before, after []bool
			for pk, ta := range pa {
				if pk.cell != k.cell || pk.cond != k.cond {
					continue
				}
				tb, ok := pb[pk]
				if !ok {
					continue
				}
				shared++
				ca, badA := judge(ta)
				cb, badB := judge(tb)
				if !ca || !cb {
					continue
				}
				before = append(before, badA)
				after = append(after, badB)
			}
			p, err := Compare(before, after)
			if err != nil {
				return nil, err
			}
			row.Better, row.Worse, row.Same, row.P, row.Method = p.Better, p.Worse, p.Same, p.P, p.Method
			row.Call = call(p.P, float64(p.Worse-p.Better))
		}
		rows = append(rows, row)
	}
	if !unpaired && shared == 0 {
		return nil, ErrNoSharedSeeds
	}
	return rows, nil
}

// call names a difference: worse when B has more of the bad outcome and the test says it
// is unlikely by chance, better in the other direction, same otherwise.
func call(p, direction float64) string {
	switch {
	case p < Alpha && direction > 0:
		return "worse"
	case p < Alpha && direction < 0:
		return "better"
	}
	return "same"
}

// FormatP prints a p-value for a table.
func FormatP(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	return fmt.Sprintf("%.3f", p)
}
