// Package skilltest turns one clean, recorded run of a Claude Code skill against its real
// MCP servers into a chaos run: the fault conditions planned from the calls the skill
// made, and the spec whose every trial starts claude -p in a fresh sandbox holding the
// skill and its input files, with the wall as its only MCP server.
//
//	clean run (recording wall, real servers) ──> record ──> Plan ──> Spec ──> chaos run
package skilltest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/proxies/upstream"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
)

// Planned is one condition of the plan and why it is there.
type Planned struct {
	ID     string `json:"id"`
	Family string `json:"family"`
	Tool   string `json:"tool"`
	Why    string `json:"why"`
}

// Plan is the conditions a skill test runs, planned from the calls of its clean run.
type Plan struct {
	Conditions []Planned `json:"conditions"`
	// Skipped says, in words, what was not planned and why.
	Skipped []string `json:"skipped,omitempty"`
	// Calls counts the clean run's calls per tool, in the order first called.
	Calls []ToolCalls `json:"calls"`
}

// ToolCalls is how often the clean run called a tool, and what the tool does.
type ToolCalls = faults.SkillTool

// IDs are the condition ids, clean first, as chaos run --only takes them.
func (p Plan) IDs() []string {
	out := []string{faults.CleanID}
	for _, c := range p.Conditions {
		out = append(out, c.ID)
	}
	return out
}

// Families are the fault families the plan uses, each once, in plan order.
func (p Plan) Families() []string {
	var out []string
	for _, c := range p.Conditions {
		if !slices.Contains(out, c.Family) {
			out = append(out, c.Family)
		}
	}
	return out
}

// NewPlan plans the conditions from the calls the clean run made, as each family's entry
// says (faults.SkillPlan): each tool it wrote or read with gets the families planned on
// a tool of that effect, tool by tool, and then the families planned once on the whole
// run (a session drop, from the second call of a tool written twice). A call that failed
// in the clean run counts too: the skill makes it.
func NewPlan(log *record.Log, classes []upstream.Classification) Plan {
	effect := map[string]spec.Effect{}
	for _, c := range classes {
		effect[c.Tool] = c.Effect
	}
	var p Plan
	index := map[string]int{}
	for _, c := range log.Calls() {
		i, ok := index[c.Tool]
		if !ok {
			i = len(p.Calls)
			index[c.Tool] = i
			e, known := effect[c.Tool]
			if !known {
				e = spec.EffectNone
			}
			p.Calls = append(p.Calls, ToolCalls{Tool: c.Tool, Effect: e})
		}
		p.Calls[i].Calls++
	}
	add := func(family, tool, why string) {
		p.Conditions = append(p.Conditions, Planned{ID: faults.ID(family, "", tool, 0), Family: family, Tool: tool, Why: why})
	}
	run := faults.SkillRun{Calls: p.Calls, AnyWriter: slices.ContainsFunc(classes, func(c upstream.Classification) bool { return c.Effect == spec.EffectWrite })}
	verb := map[spec.Effect]string{spec.EffectWrite: "wrote", spec.EffectRead: "read"}
	for _, t := range p.Calls {
		fams := faults.SkillFamilies(t.Effect)
		if len(fams) == 0 {
			p.Skipped = append(p.Skipped, fmt.Sprintf("%s: it neither writes nor reads back (effect: %s), so no fault is planned on it", t.Tool, t.Effect))
			continue
		}
		for _, f := range fams {
			if f.Skill.Skip != nil {
				if why := f.Skill.Skip(run, t); why != "" {
					p.Skipped = append(p.Skipped, fmt.Sprintf("%s@%s: %s", f.Name, t.Tool, why))
					continue
				}
			}
			add(f.Name, t.Tool, fmt.Sprintf("the clean run %s with %s (%s)", verb[t.Effect], t.Tool, times(t.Calls)))
		}
	}
	for _, f := range faults.SkillWholeRun() {
		switch tool, why := f.Skill.Whole(run); {
		case tool != "":
			add(f.Name, tool, why)
		case why != "":
			p.Skipped = append(p.Skipped, fmt.Sprintf("%s: %s", f.Name, why))
		}
	}
	return p
}

func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

// Describe is the plan as the console shows it, one condition a line.
func (p Plan) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the clean run called:")
	if len(p.Calls) == 0 {
		b.WriteString(" no tool")
	}
	for i, t := range p.Calls {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " %s (%s, %s)", t.Tool, t.Effect, times(t.Calls))
	}
	b.WriteString("\nconditions:\n  clean  no fault: the baseline\n")
	for _, c := range p.Conditions {
		fmt.Fprintf(&b, "  %s  %s\n", c.ID, c.Why)
	}
	for _, s := range p.Skipped {
		fmt.Fprintf(&b, "  not planned: %s\n", s)
	}
	return b.String()
}
