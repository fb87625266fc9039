package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/spec"
)

// branchLine is the plan's one line about --branch ("" without it): where the fault
// trials start, or why they run whole.
func branchLine(s *spec.Spec, p *spec.Plan) string {
	if !p.Branch {
		return ""
	}
	if !slices.Contains(p.Conditions, faults.CleanID) {
		return "branch: none, the fault trials run whole: the run has no clean trial to branch from (--only leaves out clean)"
	}
	var whole []string
	for _, t := range s.Tasks {
		if len(t.Units) < 2 {
			name := t.ID
			if name == "" {
				name = "the task"
			}
			whole = append(whole, name)
		}
	}
	if len(whole) == len(s.Tasks) {
		return "branch: none, the fault trials run whole: --branch needs a task of two units or more (units:)"
	}
	line := "branch: clean trials first; each fault trial starts from its cell's clean trial just before its first write on the last unit (result.json's branch says where, or why it ran whole)"
	if len(whole) > 0 {
		line += "; " + strings.Join(whole, ", ") + " of one unit run whole"
	}
	return fmt.Sprint(line)
}
