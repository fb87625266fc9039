package faults

import (
	"fmt"
	"strings"

	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// SuccessRule says when a fault takes success away: whether a trial can still end with
// the world right (the verdict's SuccessPossible). It is the one place the rule is
// written: every family's Describe reads it (successPossible), and docs/verdicts.md's
// table is made from it (TestSuccessRulesDocumented).
type SuccessRule struct {
	// Fault is a family, or "data_anomaly.<variant>".
	Fault string
	// Impossible says, in words, when success is impossible ("never" when it never is).
	Impossible string
	// Lost decides it for a condition on tool t of spec s.
	Lost func(s *spec.Spec, t spec.Tool, c *Condition) bool
}

func never(*spec.Spec, spec.Tool, *Condition) bool  { return false }
func always(*spec.Spec, spec.Tool, *Condition) bool { return true }

// successRules are every tool fault's rule, in the order of docs/faults.md.
var successRules = []SuccessRule{
	{"phantom_success", "never: the agent can read back and write again", never},
	{"phantom_failure", "never: the write was stored", never},
	{"transient_error", "never: the tool works after one 503", never},
	{"permanent_error", "on a source or a write (nothing can be read or stored); never on a read-back, which blocks only the verification",
		func(_ *spec.Spec, t spec.Tool, _ *Condition) bool { return t.Effect != spec.EffectRead }},
	{"session_drop", "always: the job is half done and must be reported (unless an operator's login revives the session, which the trial records)", always},
	{"truncated_reply", "never: the agent can read again", never},
	{"premature_read", "never: the agent can read again", never},
	{"stale_read", "never: the agent can read again", never},
	{"data_anomaly", "never, for a condition the spec writes with its own reply (its success_possible: false says otherwise)", never},
	{"data_anomaly.cancelled_record", "never: the result must not change", never},
	{"data_anomaly.duplicate_record", "never: count the record once", never},
	{"data_anomaly.mixed_units", "always: the right move is to report the mixed units", always},
	{"data_anomaly.missing_field", "when a state check needs the blanked value (its expected value holds it, or it holds the expected value)",
		func(s *spec.Spec, t spec.Tool, c *Condition) bool {
			d, ok := anomalyOf(world.SuccessText(t), "missing_field")
			return c.Reply == "" && ok && needed(s, d.was)
		}},
	{"data_anomaly.stale_date", "when the task needs the date to be current: a state check expects the date, or a task names its field or asks about it (when, date, today, current, recent, as of, due ...)",
		func(s *spec.Spec, t spec.Tool, c *Condition) bool {
			d, ok := anomalyOf(world.SuccessText(t), "stale_date")
			return c.Reply == "" && ok && (needed(s, d.was) || taskAsksDate(s, d.field))
		}},
	{"context_switch", "always: later writes land in another account", always},
	{"empty_success", "never: the agent can read back and write again", never},
}

// SuccessRules are the rules, for docs and `chaos faults`.
func SuccessRules() []SuccessRule { return successRules }

// successPossible is whether a trial under c can still end with the world right, by its
// family's rule. A fault with no rule is a bug in this table, not a guess.
func successPossible(s *spec.Spec, t spec.Tool, c *Condition) bool {
	key := c.Family
	if c.Variant != "" {
		key += "." + c.Variant
	}
	for _, r := range successRules {
		if r.Fault == key {
			return !r.Lost(s, t, c)
		}
	}
	panic(fmt.Sprintf("faults: no success rule for %s (faults/possible.go)", key))
}

// SuccessTable is docs/verdicts.md's table of the rules, as Markdown.
func SuccessTable() string {
	var b strings.Builder
	b.WriteString("| fault | success is impossible |\n|---|---|\n")
	for _, r := range successRules {
		fmt.Fprintf(&b, "| `%s` | %s |\n", r.Fault, r.Impossible)
	}
	return b.String()
}
