package faults

import (
	"fmt"
	"strings"

	"github.com/crashwall/chaos/spec"
)

// SuccessRule says when a fault takes success away: whether a trial can still end with
// the world right (the verdict's SuccessPossible). Each family writes its rules in its
// registered Entry; every family's Describe reads them (successPossible), and
// docs/verdicts.md's table is made from them (TestSuccessRulesDocumented).
type SuccessRule struct {
	// Fault is a family, or "<family>.<variant>" for a variant with a rule of its own.
	Fault string
	// Impossible says, in words, when success is impossible ("never" when it never is).
	Impossible string
	// Lost decides it for a condition on tool t of spec s.
	Lost func(s *spec.Spec, t spec.Tool, c *Condition) bool
}

func never(*spec.Spec, spec.Tool, *Condition) bool  { return false }
func always(*spec.Spec, spec.Tool, *Condition) bool { return true }

// SuccessRules are every tool fault's rules, family by family in Rank order (the order
// of docs/faults.md), for docs and `chaos faults`.
func SuccessRules() []SuccessRule {
	var out []SuccessRule
	for _, f := range Families() {
		out = append(out, f.Success...)
	}
	return out
}

// successPossible is whether a trial under c can still end with the world right, by its
// family's rule (its variant's, where the variant has one). A fault with no rule is a bug
// in its family's Entry, not a guess.
func successPossible(s *spec.Spec, t spec.Tool, c *Condition) bool {
	f, _ := Lookup(c.Family)
	key := c.Family
	if c.Variant != "" {
		key += "." + c.Variant
	}
	for _, r := range f.Success {
		if r.Fault == key {
			return !r.Lost(s, t, c)
		}
	}
	panic(fmt.Sprintf("faults: no success rule for %s (the Success of its family's Entry)", key))
}

// SuccessTable is docs/verdicts.md's table of the rules, as Markdown.
func SuccessTable() string {
	var b strings.Builder
	b.WriteString("| fault | success is impossible |\n|---|---|\n")
	for _, r := range SuccessRules() {
		fmt.Fprintf(&b, "| `%s` | %s |\n", r.Fault, r.Impossible)
	}
	return b.String()
}
