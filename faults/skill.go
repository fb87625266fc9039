package faults

import (
	"cmp"
	"slices"

	"github.com/crashwall/chaos/spec"
)

// SkillTool is one tool a skill's clean recorded run called: what it does and how often.
type SkillTool struct {
	Tool   string      `json:"tool"`
	Effect spec.Effect `json:"effect"`
	Calls  int         `json:"calls"`
}

// SkillRun is what chaos skill test plans from: the clean run's calls per tool, in the
// order first called, and whether any tool of the servers writes.
type SkillRun struct {
	Calls     []SkillTool
	AnyWriter bool
}

// SkillPlan is where chaos skill test plans a family on a skill's clean run: on every
// tool of Effect the run called (families on one tool in Rank order), or once on the
// whole run (Whole), after the per-tool ones.
type SkillPlan struct {
	// Effect is the effect of the tools the family is planned on ("" : Whole plans it).
	Effect spec.Effect
	// Rank orders the families planned on one tool.
	Rank int
	// Skip says why the family is not planned on tool t ("" : it is); nil plans it on
	// every tool of Effect.
	Skip func(run SkillRun, t SkillTool) string
	// Whole plans the family once on the run: the tool it hits and why, or, with no tool,
	// why not ("" : nothing worth saying).
	Whole func(run SkillRun) (tool, why string)
}

// SkillFamilies are the families a skill test plans on each tool of effect e, in their
// SkillPlan's Rank order.
func SkillFamilies(e spec.Effect) []Entry {
	var out []Entry
	for _, f := range Families() {
		if f.Skill != nil && f.Skill.Effect == e && e != "" {
			out = append(out, f)
		}
	}
	slices.SortStableFunc(out, func(a, b Entry) int { return cmp.Compare(a.Skill.Rank, b.Skill.Rank) })
	return out
}

// SkillWholeRun are the families a skill test plans once on the whole run, in Rank order.
func SkillWholeRun() []Entry {
	var out []Entry
	for _, f := range Families() {
		if f.Skill != nil && f.Skill.Whole != nil {
			out = append(out, f)
		}
	}
	return out
}
