package spec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
)

// Layout is how a plan's trials are made, in a form whose size does not grow with the
// number of trials: the tasks, the axes, the spec's seed and (for a paired run) the seeds
// it reuses. Trials are cells x conditions x replicates, in that order; Expand makes them
// again exactly as NewPlan did.
//
// A plan travels as JSON in the experiment workflow's start input, in every
// continue-as-new and in the Aggregate activity's input, so its encoding is what bounds
// those payloads: with a layout, a plan of 10,000 trials is a few hundred bytes instead
// of ~1.1 MB (Temporal refuses a payload over 2 MB).
type Layout struct {
	Tasks []string     `json:"tasks"`
	Axes  []LayoutAxis `json:"axes,omitempty"`
	Seed  int64        `json:"seed"`
	// Seeds are the seeds a paired run reuses that differ from its own, by
	// cell index x replicates + rep - 1 (see Plan.ReuseSeeds): at most cells x replicates,
	// never one per condition.
	Seeds map[int]int64 `json:"seeds,omitempty"`
}

// LayoutAxis is one axis of the spec, in spec order.
type LayoutAxis struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

// maxExpand bounds the trials a decoded layout may make: the input is not trusted to
// be small (a layout of a few bytes could name a billion trials).
const maxExpand = 1 << 20

func newLayout(s *Spec) *Layout {
	l := &Layout{Seed: s.Seed}
	for _, t := range s.Tasks {
		l.Tasks = append(l.Tasks, t.ID)
	}
	for _, ax := range s.Axes {
		l.Axes = append(l.Axes, LayoutAxis{Name: ax.Name, Values: ax.Values})
	}
	return l
}

// cellCount is the number of cells, or -1 past maxExpand.
func (l *Layout) cellCount() int {
	n := len(l.Tasks)
	for _, ax := range l.Axes {
		if n > maxExpand {
			return -1
		}
		n *= len(ax.Values)
	}
	if n > maxExpand {
		return -1
	}
	return n
}

// cell is the i-th cell in the order of Spec.Cells: tasks outermost, then the axes in
// spec order, the last one varying fastest.
func (l *Layout) cell(i int) (key, task string, axes map[string]string) {
	axes = map[string]string{}
	idx := make([]int, len(l.Axes))
	for a := len(l.Axes) - 1; a >= 0; a-- {
		n := len(l.Axes[a].Values)
		idx[a] = i % n
		i /= n
	}
	task = l.Tasks[i]
	for a, ax := range l.Axes {
		axes[ax.Name] = ax.Values[idx[a]]
	}
	var parts []string
	if len(l.Tasks) > 1 {
		parts = append(parts, "task="+task)
	}
	for _, ax := range l.Axes {
		parts = append(parts, ax.Name+"="+axes[ax.Name])
	}
	key = strings.Join(parts, ",")
	if key == "" {
		key = "main"
	}
	return key, task, axes
}

// Expand makes the cell keys and the trials of a plan over conditions and reps.
func (l *Layout) Expand(conditions []string, reps int) (cells []string, trials []TrialPlan, err error) {
	nc := l.cellCount()
	if nc < 0 || reps < 0 || (nc > 0 && int64(nc)*int64(len(conditions))*int64(reps) > maxExpand) {
		return nil, nil, fmt.Errorf("the plan's layout names more than %d trials", maxExpand)
	}
	for c := range nc {
		key, task, axes := l.cell(c)
		cells = append(cells, key)
		for _, cond := range conditions {
			for rep := 1; rep <= reps; rep++ {
				seed, ok := l.Seeds[c*reps+rep-1]
				if !ok {
					seed = TrialSeed(l.Seed, key, rep)
				}
				trials = append(trials, TrialPlan{
					ID: TrialID(key, cond, rep), Cell: key, Axes: axes, Task: task,
					Condition: cond, Rep: rep, Seed: seed,
				})
			}
		}
	}
	return cells, trials, nil
}

// layoutPlan is a plan's JSON with a layout: "trials" is an object holding the layout,
// not a list, and there are no cells; both are made again from the layout when it is
// read. (A worker of a build before layouts then fails to read the input, and the
// workflow task is retried until an upgraded worker takes it, instead of running a
// plan of no trials.)
type layoutPlan struct {
	SpecName    string       `json:"spec_name"`
	Trials      layoutTrials `json:"trials"`
	Conditions  []string     `json:"conditions"`
	Replicates  int          `json:"replicates"`
	Concurrency int          `json:"concurrency"`
	PairedWith  string       `json:"paired_with,omitempty"`
	Branch      bool         `json:"branch,omitempty"`
}

type layoutTrials struct {
	Layout *Layout `json:"layout"`
}

// fullPlan is a plan's JSON with every trial (plans made before layouts, or one whose
// trials its layout no longer makes); the type drops Plan's JSON methods.
type fullPlan Plan

// MarshalJSON writes the plan as its layout when the layout makes exactly its trials,
// else as every trial.
func (p Plan) MarshalJSON() ([]byte, error) {
	if p.Layout != nil && p.layoutMatches() {
		return json.Marshal(layoutPlan{SpecName: p.SpecName, Trials: layoutTrials{p.Layout}, Conditions: p.Conditions,
			Replicates: p.Replicates, Concurrency: p.Concurrency, PairedWith: p.PairedWith, Branch: p.Branch})
	}
	f := fullPlan(p)
	f.Layout = nil
	return json.Marshal(f)
}

// UnmarshalJSON reads either form; a layout is expanded into Cells and Trials.
func (p *Plan) UnmarshalJSON(b []byte) error {
	var probe struct {
		Trials json.RawMessage `json:"trials"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return err
	}
	if t := bytes.TrimSpace(probe.Trials); len(t) == 0 || t[0] != '{' {
		var f fullPlan
		if err := json.Unmarshal(b, &f); err != nil {
			return err
		}
		*p = Plan(f)
		return nil
	}
	var lp layoutPlan
	if err := json.Unmarshal(b, &lp); err != nil {
		return err
	}
	l := lp.Trials.Layout
	if l == nil {
		return fmt.Errorf("the plan's trials hold no layout")
	}
	cells, trials, err := l.Expand(lp.Conditions, lp.Replicates)
	if err != nil {
		return err
	}
	*p = Plan{SpecName: lp.SpecName, Conditions: lp.Conditions, Cells: cells, Trials: trials, Replicates: lp.Replicates,
		Concurrency: lp.Concurrency, PairedWith: lp.PairedWith, Layout: l, Branch: lp.Branch}
	return nil
}

// layoutMatches says whether the layout makes the plan's cells and trials exactly.
func (p *Plan) layoutMatches() bool {
	cells, trials, err := p.Layout.Expand(p.Conditions, p.Replicates)
	if err != nil || len(cells) != len(p.Cells) || len(trials) != len(p.Trials) {
		return false
	}
	for i := range cells {
		if cells[i] != p.Cells[i] {
			return false
		}
	}
	for i, t := range trials {
		u := p.Trials[i]
		if t.ID != u.ID || t.Cell != u.Cell || t.Task != u.Task || t.Condition != u.Condition || t.Rep != u.Rep ||
			t.Seed != u.Seed || !maps.Equal(t.Axes, u.Axes) {
			return false
		}
	}
	return true
}

// reuseSeed records in the layout a seed a paired run reuses for trial i.
func (l *Layout) reuseSeed(p *Plan, i int, seed int64) {
	t := p.Trials[i]
	cell := i / max(len(p.Conditions)*p.Replicates, 1)
	if seed == TrialSeed(l.Seed, t.Cell, t.Rep) {
		return
	}
	if l.Seeds == nil {
		l.Seeds = map[int]int64{}
	}
	l.Seeds[cell*p.Replicates+t.Rep-1] = seed
}
