package faults

import (
	"flag"
	"os"
	"strings"
	"testing"
)

// TestEveryFaultHasASuccessRule: every registered tool family (each data_anomaly variant
// on its own) has its rule in possible.go, and no rule names a fault that is not one.
func TestEveryFaultHasASuccessRule(t *testing.T) {
	rules := map[string]bool{}
	for _, r := range SuccessRules() {
		rules[r.Fault] = true
	}
	want := map[string]bool{}
	for _, f := range Families() {
		want[f.Name] = true
		if f.Name == "data_anomaly" {
			for _, v := range f.Kinds {
				want["data_anomaly."+v] = true
			}
		}
	}
	for k := range want {
		if !rules[k] {
			t.Errorf("fault %s has no success rule in its Entry", k)
		}
	}
	for k := range rules {
		if !want[k] {
			t.Errorf("a rule for %s, which is no fault", k)
		}
	}
}

// The table of success rules in docs/verdicts.md sits between these markers.
const (
	successTableStart = "<!-- The success rules, generated from faults/possible.go (go test ./faults -run TestSuccessRulesDocumented -update-rules); do not edit here. -->\n"
	successTableEnd   = "<!-- End of the success rules. -->\n"
)

// TestSuccessRulesDocumented: docs/verdicts.md's table of when each fault makes success
// impossible is the rules the code reads (-update-rules rewrites it).
func TestSuccessRulesDocumented(t *testing.T) {
	path := "../docs/verdicts.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok1 := strings.Cut(string(b), successTableStart)
	old, after, ok2 := strings.Cut(rest, successTableEnd)
	if !ok1 || !ok2 {
		t.Fatalf("%s has no success-rule table between its markers", path)
	}
	if got := SuccessTable(); old != got {
		if *updateRules {
			if err := os.WriteFile(path, []byte(before+successTableStart+got+successTableEnd+after), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("%s's success-rule table is stale: go test ./faults -run TestSuccessRulesDocumented -update-rules", path)
	}
}

var updateRules = flag.Bool("update-rules", false, "rewrite docs/verdicts.md's table of success rules")
