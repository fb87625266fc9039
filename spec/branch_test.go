package spec

import (
	"encoding/json"
	"strings"
	"testing"
)

// A --branch plan keeps Branch when it travels as its layout (and as every trial).
func TestPlanBranchRoundTrip(t *testing.T) {
	p, err := NewPlan(&Spec{Name: "one", Seed: 7, Tasks: []Task{{ID: "t", Units: []string{"a", "b"}}}}, []string{"clean", "phantom_success@w"}, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, branch := range []bool{true, false} {
		p.Branch = branch
		raw, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(raw), `"layout"`) {
			t.Fatalf("the plan did not travel as its layout: %s", raw)
		}
		var back Plan
		if err := json.Unmarshal(raw, &back); err != nil {
			t.Fatal(err)
		}
		if back.Branch != branch || len(back.Trials) != len(p.Trials) {
			t.Errorf("branch %v: read back branch %v, %d trials (want %d)", branch, back.Branch, len(back.Trials), len(p.Trials))
		}
	}
}
