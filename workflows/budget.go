package workflows

import (
	"fmt"

	"github.com/crashwall/chaos/cost"
	"github.com/crashwall/chaos/run"
)

// budget decides, before each trial starts, whether the run can still afford it.
type budget struct {
	usd      float64 // 0: no budget
	expected float64 // per trial before any finished
	// stopped says why no further trial was started ("": the budget never stopped one).
	stopped string
}

func newBudget(usd, expected float64) *budget {
	if usd <= 0 {
		return &budget{}
	}
	return &budget{usd: usd, expected: expected}
}

// stops says whether starting one more trial could exceed the budget: what the finished
// trials spent, plus what the running ones and the new one are expected to spend (the
// finished trials' mean, else the run's estimate; nothing known, the trial starts). When
// it stops, b.stopped says how many trials were not started and why.
func (b *budget) stops(t run.Tally, running, left int) bool {
	if b.usd <= 0 || b.stopped != "" {
		return b.stopped != ""
	}
	expected := b.expected
	if t.Done > 0 {
		expected = t.SpentUSD / float64(t.Done)
	}
	need := cost.Round(t.SpentUSD + expected*float64(running+1))
	if need <= b.usd {
		return false
	}
	b.stopped = fmt.Sprintf("%d trial(s) not started: the run had spent %s of its budget of %s, and %d more trial(s) at %s each would exceed it (--budget)",
		left, cost.Format(t.SpentUSD), cost.Format(b.usd), running+1, cost.Format(expected))
	return true
}
