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

// The families a skill test plans, by the effect of the tool they hit.
var (
	// WriteFamilies hit every tool the clean run wrote with.
	WriteFamilies = []string{"phantom_success", "transient_error", "permanent_error", "phantom_failure"}
	// ReadFamilies hit every tool the clean run read with.
	ReadFamilies = []string{"truncated_reply", "premature_read", "stale_read"}
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
type ToolCalls struct {
	Tool   string      `json:"tool"`
	Effect spec.Effect `json:"effect"`
	Calls  int         `json:"calls"`
}

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

// NewPlan plans the conditions from the calls the clean run made: each tool it wrote
// with gets phantom success, a transient and a permanent error and phantom failure; two
// writes or more add a session drop (from the second call of a tool written twice, the
// point where faults.session_drop starts); each tool it read with gets a truncated
// reply, a premature read and, when some tool writes, a stale read. A call that failed
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
	writes, anyWriter := 0, slices.ContainsFunc(classes, func(c upstream.Classification) bool { return c.Effect == spec.EffectWrite })
	var twice string
	for _, t := range p.Calls {
		switch t.Effect {
		case spec.EffectWrite:
			writes += t.Calls
			if t.Calls >= 2 && twice == "" {
				twice = t.Tool
			}
			for _, f := range WriteFamilies {
				add(f, t.Tool, fmt.Sprintf("the clean run wrote with %s (%s)", t.Tool, times(t.Calls)))
			}
		case spec.EffectRead:
			for _, f := range ReadFamilies {
				if f == "stale_read" && !anyWriter {
					p.Skipped = append(p.Skipped, fmt.Sprintf("stale_read@%s: no tool of the servers writes, so nothing can be stale", t.Tool))
					continue
				}
				add(f, t.Tool, fmt.Sprintf("the clean run read with %s (%s)", t.Tool, times(t.Calls)))
			}
		default:
			p.Skipped = append(p.Skipped, fmt.Sprintf("%s: it neither writes nor reads back (effect: none), so no fault is planned on it", t.Tool))
		}
	}
	switch {
	case writes >= 2 && twice != "":
		add("session_drop", twice, fmt.Sprintf("the clean run wrote %d times; the session drops from the second call to %s", writes, twice))
	case writes >= 2:
		p.Skipped = append(p.Skipped, fmt.Sprintf("session_drop: the clean run wrote %d times but with no tool twice, and a session drop starts at a tool's second call", writes))
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
