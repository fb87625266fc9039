package spec

import (
	"strings"
	"testing"
)

// Axis values that differ only in characters a trial id cannot hold are refused at their
// line; every trial of a plan that loads has an id of its own.
func TestTrialIDsUnique(t *testing.T) {
	base := "name: x\ntask: t\ntools: [{name: t}]\naxes:\n  model: "
	for _, tt := range []struct{ values, want string }{
		{`["a/b", "a_b"]`, `spec.yaml:5: axis "model": values "a/b" and "a_b" both name the trials model=a_b`},
		{`["a b", "a/b"]`, `spec.yaml:5: axis "model": values "a b" and "a/b" both name the trials model=a_b`},
		{`["x", "a/b", "a_b", "a b"]`, `values "a/b" and "a b" both name the trials model=a_b`},
	} {
		t.Run(tt.values, func(t *testing.T) {
			_, err := Parse("spec.yaml", []byte(base+tt.values+"\n"))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v; want %s", err, tt.want)
			}
		})
	}
	s, err := Parse("spec.yaml", []byte(base+`["a/b", "a.b", "A_b", "a=b"]`+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan(s, []string{"clean", "x/y"}, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, tr := range p.Trials {
		if seen[tr.ID] {
			t.Errorf("trial id %s twice", tr.ID)
		}
		seen[tr.ID] = true
	}
	if len(seen) != 4*2*2 {
		t.Errorf("%d trial ids; want 16", len(seen))
	}

	// Task ids and conditions collide only past the loader: the plan refuses them.
	s = &Spec{Name: "x", Tasks: []Task{{ID: "a/b"}, {ID: "a b"}}}
	if _, err := NewPlan(s, []string{"clean"}, 1, 1); err == nil || !strings.Contains(err.Error(), `cells "task=a/b" and "task=a b" both name the trials task=a_b`) {
		t.Errorf("colliding tasks: %v", err)
	}
	s = &Spec{Name: "x", Tasks: []Task{{ID: "t"}}}
	if _, err := NewPlan(s, []string{"c/1", "c 1"}, 1, 1); err == nil || !strings.Contains(err.Error(), `conditions "c/1" and "c 1" both name the trials c_1`) {
		t.Errorf("colliding conditions: %v", err)
	}
}
