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
	A         Rate   `json:"a"`
	B         Rate   `json:"b"`
	// Better, Worse, Same count shared seeds (paired) where B is better, worse or the same.
	Better int     `json:"better,omitempty"`
	Worse  int     `json:"worse,omitempty"`
	Same   int     `json:"same,omitempty"`
	P      float64 `json:"p"`
	Method string  `json:"method"`
	// Call is "better", "worse" or "same": B against A, at Alpha.
	Call string `json:"call"`
}

// Diff compares run B with run A per cell and condition. Paired (McNemar's exact test on
// the seeds both runs share) unless unpaired is set; paired with no shared seed at all is
// ErrNoSharedSeeds.
func Diff(a, b *Run, unpaired bool) ([]DiffRow, error) {
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
	shared := 0
	var rows []DiffRow
	for _, k := range keys {
		row := DiffRow{Cell: k.cell, Condition: k.cond, A: badRate(ga[k]), B: badRate(gb[k])}
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
				if !ok || !Scored(ta.Verdict) || !Scored(tb.Verdict) {
					continue
				}
				before = append(before, ta.Verdict == SilentWrong)
				after = append(after, tb.Verdict == SilentWrong)
			}
			shared += len(before)
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

func badRate(ts []run.TrialResult) Rate {
	k, n := 0, 0
	for _, t := range ts {
		if Scored(t.Verdict) {
			n++
			if t.Verdict == SilentWrong {
				k++
			}
		}
	}
	return NewRate(k, n)
}

// FormatP prints a p-value for a table.
func FormatP(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	return fmt.Sprintf("%.3f", p)
}
