package faults

import (
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// AjantikGenerates reports whether Ajantik's auto_faults would generate the generated
// condition c for spec s: its family is one of Ajantik's modules (chaos's own families
// are not), and a data anomaly is
// one Ajantik's generator derives. The families apply to the same tools in both; the one
// variant chaos adds is missing_field on an object that has a date (Ajantik makes a
// stale_date there and no missing_field). Hand-written conditions are the spec's own.
func AjantikGenerates(s *spec.Spec, c Condition) bool {
	if c.Clean() {
		return true
	}
	if !spec.AjantikFamily(c.Family) {
		return false
	}
	if c.Family == "data_anomaly" && c.Variant == "missing_field" {
		t, ok := s.ToolByName(c.Tool)
		if !ok {
			return false
		}
		root, ok := parseJSONText(world.SuccessText(t))
		return ok && (records(root) != nil || root.kind != '{' || staleDateKey(root) == "")
	}
	return true
}

// ajantikSet keeps, of the generated conditions, those Ajantik would generate, and every
// hand-written one (fault_set: ajantik).
func ajantikSet(s *spec.Spec, generated []Condition) []Condition {
	var out []Condition
	for _, c := range generated {
		if AjantikGenerates(s, c) {
			out = append(out, c)
		}
	}
	return out
}
