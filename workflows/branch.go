package workflows

import (
	"strconv"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/spec"
)

// branchOrder is the order trials start in: plan order, or, under chaos run --branch
// (docs/shim.md), the clean trials first, each fault trial starting once they are done,
// from its clean trial's twin. It is made from the plan alone, so the experiment, each
// batch and a continue-as-new agree on it.
type branchOrder struct {
	on     bool
	order  []int             // position -> index in plan.Trials
	clean  map[string]string // cell/rep -> the clean trial's ID, and cell -> the first one
	cleans int               // the clean trials, the first positions
}

func newBranchOrder(plan spec.Plan) *branchOrder {
	b := &branchOrder{}
	if !plan.Branch {
		return b
	}
	b.on, b.clean = true, map[string]string{}
	var faulted []int
	for i, t := range plan.Trials {
		if t.Condition != faults.CleanID {
			faulted = append(faulted, i)
			continue
		}
		b.order = append(b.order, i)
		b.cleans++
		b.clean[repKey(t)] = t.ID
		if _, ok := b.clean[t.Cell]; !ok {
			b.clean[t.Cell] = t.ID
		}
	}
	b.order = append(b.order, faulted...)
	return b
}

func repKey(t spec.TrialPlan) string { return t.Cell + "\x00" + strconv.Itoa(t.Rep) }

// trial is the plan index of the trial at position i.
func (b *branchOrder) trial(i int) int {
	if !b.on {
		return i
	}
	return b.order[i]
}

// from is the clean trial a fault trial starts from: its cell's of the same replicate,
// else its cell's first ("" for a clean trial, or without --branch).
func (b *branchOrder) from(t spec.TrialPlan) string {
	if !b.on || t.Condition == faults.CleanID {
		return ""
	}
	if id, ok := b.clean[repKey(t)]; ok {
		return id
	}
	return b.clean[t.Cell]
}
