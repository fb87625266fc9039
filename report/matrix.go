package report

import (
	"sort"

	"github.com/crashwall/chaos/run"
)

// Cell is one condition in one arm (a cell of the spec's axes, or a run when runs are
// put side by side): its silent-wrong rate over the scored trials and what was left out.
type Cell struct {
	Condition   string         `json:"condition"`
	Arm         string         `json:"arm"`
	SilentWrong Rate           `json:"silent_wrong"`
	Verdicts    map[string]int `json:"verdicts"`
	// Excluded counts trials left out of the rate, by reason (not_triggered, no_verdict).
	Excluded map[string]int `json:"excluded"`
	Trials   []string       `json:"trials"`
	// Reviewed counts, per reviewer ("model:NAME"), the scored trials whose world verdict
	// the reviewer decided: the rate rests on its word there.
	Reviewed map[string]int `json:"reviewed,omitempty"`
}

// Matrix is conditions x arms. Conditions where success is impossible are kept apart:
// their trials are judged (did the agent report it?) but not mixed with the rest.
type Matrix struct {
	Arms       []string                    `json:"arms"`
	Possible   []string                    `json:"possible"`
	Impossible []string                    `json:"impossible"`
	Cells      map[string]map[string]*Cell `json:"cells"` // condition -> arm -> cell
}

// Entry is a trial placed in an arm, under a key unique across the runs shown.
type Entry struct {
	Trial run.TrialResult
	Arm   string
	Key   string
}

// NewMatrix builds the matrix over entries; conditions keeps the plan's order.
func NewMatrix(entries []Entry, conditions []string) *Matrix {
	m := &Matrix{Cells: map[string]map[string]*Cell{}}
	seenArm := map[string]bool{}
	possible := map[string]bool{}
	for _, e := range entries {
		t, a := e.Trial, e.Arm
		if !seenArm[a] {
			seenArm[a] = true
			m.Arms = append(m.Arms, a)
		}
		row := m.Cells[t.Condition]
		if row == nil {
			row = map[string]*Cell{}
			m.Cells[t.Condition] = row
		}
		c := row[a]
		if c == nil {
			c = &Cell{Condition: t.Condition, Arm: a, Verdicts: map[string]int{}, Excluded: map[string]int{}}
			row[a] = c
		}
		c.Trials = append(c.Trials, e.Key)
		v := t.Verdict
		if v == "" {
			v = NoVerdict
		}
		c.Verdicts[v]++
		if !Scored(v) {
			c.Excluded[v]++
		}
		if by := ReviewDecided(t); by != "" {
			if c.Reviewed == nil {
				c.Reviewed = map[string]int{}
			}
			c.Reviewed[by]++
		}
		if t.SuccessPossible || t.Condition == "clean" {
			possible[t.Condition] = true
		}
	}
	sort.Strings(m.Arms)
	order := append([]string(nil), conditions...)
	for cond := range m.Cells {
		if !contains(order, cond) {
			order = append(order, cond)
		}
	}
	for _, cond := range order {
		row, ok := m.Cells[cond]
		if !ok {
			continue
		}
		for _, c := range row {
			n, k := 0, c.Verdicts[SilentWrong]
			for v, count := range c.Verdicts {
				if Scored(v) {
					n += count
				}
			}
			c.SilentWrong = NewRate(k, n)
			sort.Strings(c.Trials)
		}
		if possible[cond] {
			m.Possible = append(m.Possible, cond)
		} else {
			m.Impossible = append(m.Impossible, cond)
		}
	}
	return m
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
