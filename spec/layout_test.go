package spec

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"
)

// A plan travels as its layout, and what is read back is the plan NewPlan made: every
// cell and trial, in order, with its axes and seed (paired seeds too).
func TestPlanLayoutRoundTrip(t *testing.T) {
	one := &Spec{Name: "one", Seed: 7, Tasks: []Task{{ID: "t"}}}
	axes := &Spec{Name: "axes", Seed: 11, Tasks: []Task{{ID: "t"}},
		Axes: []Axis{{Name: "model", Values: []string{"a", "b/c", "d"}}, {Name: "size", Values: []string{"s", "l"}}}}
	tasks := &Spec{Name: "tasks", Seed: -3, Tasks: []Task{{ID: "x"}, {ID: "y"}},
		Axes: []Axis{{Name: "k", Values: []string{"1", "2"}}}}
	for _, tt := range []struct {
		name   string
		s      *Spec
		conds  []string
		reps   int
		paired bool
	}{
		{"one task", one, []string{"clean", "phantom_success@update"}, 3, false},
		{"axes", axes, []string{"clean", "x/y"}, 2, false},
		{"tasks and axes", tasks, []string{"clean"}, 4, false},
		{"paired", axes, []string{"clean", "x/y"}, 3, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewPlan(tt.s, tt.conds, tt.reps, 2)
			if err != nil {
				t.Fatal(err)
			}
			if tt.paired {
				// The other run had replicates 1 and 2 of every cell but the first.
				n := p.ReuseSeeds("/runs/other", func(cell string, rep int) (int64, bool) {
					return int64(len(cell)*1000 + rep), cell != p.Cells[0] && rep <= 2
				})
				if n == 0 {
					t.Fatal("no seed reused")
				}
			}
			b, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), `"id"`) || !strings.Contains(string(b), `"trials":{"layout":`) {
				t.Fatalf("the plan travels with its trials, want its layout: %s", b)
			}
			// A build before layouts reads "trials" as a list: it must fail, not read a
			// plan of no trials.
			var old struct {
				Trials []TrialPlan `json:"trials"`
			}
			if err := json.Unmarshal(b, &old); err == nil {
				t.Fatalf("a plan of the form before layouts read the layout as %d trials", len(old.Trials))
			}
			var got Plan
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			samePlan(t, &got, p)
		})
	}
}

// A plan whose trials its layout does not make (changed after planning) travels with
// every trial, and a plan written before layouts (every trial, no layout) still reads.
func TestPlanLayoutFallback(t *testing.T) {
	s := &Spec{Name: "one", Seed: 7, Tasks: []Task{{ID: "t"}}}
	p, err := NewPlan(s, []string{"clean", "f"}, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	p.Trials[3].Seed++
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"trials":[{"id"`) || strings.Contains(string(b), `"layout"`) {
		t.Fatalf("a changed plan must travel with its trials, not its layout: %s", b)
	}
	var got Plan
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	p.Layout = nil
	samePlan(t, &got, p)
}

// A layout naming more trials than can be held is refused, not expanded.
func TestPlanLayoutTooLarge(t *testing.T) {
	b := []byte(`{"spec_name":"x","conditions":["a","b"],"replicates":1000000,"concurrency":1,"trials":{"layout":{"tasks":["t"],"seed":1}}}`)
	var p Plan
	if err := json.Unmarshal(b, &p); err == nil || !strings.Contains(err.Error(), "more than 1048576 trials") {
		t.Fatalf("error %v, want a refusal", err)
	}
}

func samePlan(t *testing.T, got, want *Plan) {
	t.Helper()
	if got.SpecName != want.SpecName || got.Replicates != want.Replicates || got.Concurrency != want.Concurrency ||
		got.PairedWith != want.PairedWith || strings.Join(got.Conditions, "|") != strings.Join(want.Conditions, "|") ||
		strings.Join(got.Cells, "|") != strings.Join(want.Cells, "|") {
		t.Fatalf("plan read back:\n%+v\nwant\n%+v", got, want)
	}
	if len(got.Trials) != len(want.Trials) {
		t.Fatalf("%d trials read back, want %d", len(got.Trials), len(want.Trials))
	}
	for i, w := range want.Trials {
		g := got.Trials[i]
		if g.ID != w.ID || g.Cell != w.Cell || g.Task != w.Task || g.Condition != w.Condition || g.Rep != w.Rep ||
			g.Seed != w.Seed || !maps.Equal(g.Axes, w.Axes) {
			t.Errorf("trial %d read back %+v, want %+v", i, g, w)
		}
	}
}
