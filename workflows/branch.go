package workflows

import (
	"strconv"

	"go.temporal.io/sdk/workflow"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/spec"
)

// branchFirst is the workflow.GetVersion change id of chaos run --branch (docs/shim.md,
// "--branch"): the plan's clean trials run first, and each fault trial starts once
// they are done, from its clean trial's twin. Runs started before it run in plan order.
const branchFirst = "branch-first"

// branchOrder is the order trials start in: plan order, or, under --branch, the clean
// trials first (a continue-as-new keeps the same order: it is made from the plan).
type branchOrder struct {
	on      bool
	order   []int             // position -> index in plan.Trials
	clean   map[string]string // cell/rep -> the clean trial's ID, and cell -> the first one
	cleans  int               // the clean trials, the first positions
	running int               // clean trials running
}

func newBranchOrder(ctx workflow.Context, plan spec.Plan) *branchOrder {
	b := &branchOrder{}
	if !plan.Branch || workflow.GetVersion(ctx, branchFirst, workflow.DefaultVersion, 1) != 1 {
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

// ready says whether the trial at position i may start: a fault trial waits for every
// clean trial started before it (all of them come first).
func (b *branchOrder) ready(i int) bool {
	if !b.on || i < b.cleans || b.running == 0 {
		return true
	}
	return false
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

func (b *branchOrder) started(t spec.TrialPlan) {
	if b.on && t.Condition == faults.CleanID {
		b.running++
	}
}

func (b *branchOrder) finished(t spec.TrialPlan) {
	if b.on && t.Condition == faults.CleanID {
		b.running--
	}
}
