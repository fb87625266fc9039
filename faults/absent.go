package faults

import (
	"fmt"
	"strings"

	"github.com/crashwall/chaos/spec"
)

// WhyAbsent says, in words, why spec s has no generated condition of family f: the spec
// does not ask for it (faults:), fault_set: ajantik leaves it out, its tools are a real
// server's where the family needs the simulated world, or no tool is of the kind it
// needs. chaos faults prints it after the family's name, so the reason given must be
// the one that really removed it.
func WhyAbsent(s *spec.Spec, f Entry) string {
	asked := false
	for _, w := range wanted(s) {
		if w.Name == f.Name {
			asked = true
		}
	}
	if !asked {
		return fmt.Sprintf("not asked for: faults: [%s]", strings.Join(s.Faults, ", "))
	}
	if s.FaultSet == "ajantik" && !spec.AjantikFamily(f.Name) {
		return "chaos's own family, left out by fault_set: ajantik"
	}
	realOnly := false
	for _, t := range s.Tools {
		if len(f.Variants(s, t)) == 0 {
			continue
		}
		if t.Server == "" || !simulatedOnly(f.Name) {
			// A tool the family applies to: what removed its conditions is the set.
			if s.FaultSet == "ajantik" {
				return "Ajantik's generator makes none of its variants for these tools (fault_set: ajantik)"
			}
			return "every condition it generates is replaced by one of the spec's conditions"
		}
		realOnly = true
	}
	if realOnly {
		return fmt.Sprintf("needs %s of the simulated world; this spec's are a real server's", f.Eligible)
	}
	return "needs " + f.Eligible
}
