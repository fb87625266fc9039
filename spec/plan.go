package spec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"regexp"
	"sort"
	"strings"
)

// Plan is what a run will do: every trial with its cell, condition, replicate and seed.
// The experiment workflow receives it whole and plans nothing itself; on the wire a plan
// made by NewPlan is its Layout (see MarshalJSON), which does not grow with its trials.
type Plan struct {
	SpecName    string      `json:"spec_name"`
	Trials      []TrialPlan `json:"trials"`
	Conditions  []string    `json:"conditions"`
	Cells       []string    `json:"cells"`
	Replicates  int         `json:"replicates"`
	Concurrency int         `json:"concurrency"`
	// PairedWith is the run folder whose seeds the trials reuse (see PairWith).
	PairedWith string `json:"paired_with,omitempty"`
	// Layout makes Cells and Trials again from the spec's tasks, axes and seed (nil: the
	// plan travels with every trial).
	Layout *Layout `json:"layout,omitempty"`
	// Branch (chaos run --branch): each cell's clean trials run first, and its fault
	// trials start from the clean trial's twin state just before its first write on the
	// task's last unit (docs/shim.md, "--branch").
	Branch bool `json:"branch,omitempty"`
}

// TrialPlan is one trial to run.
type TrialPlan struct {
	// ID is unique in the run: cell/condition/rep.
	ID string `json:"id"`
	// Cell is the cell's key ("main" when the spec has one task and no axes).
	Cell string `json:"cell"`
	// Axes holds the cell's value per axis.
	Axes      map[string]string `json:"axes,omitempty"`
	Task      string            `json:"task"`
	Condition string            `json:"condition"`
	Rep       int               `json:"rep"`
	// Seed depends on the spec's seed, the cell and the replicate, not on the condition,
	// so a faulted trial and the clean trial of the same cell and replicate share it.
	Seed int64 `json:"seed"`
}

// Cell is one combination of axis values and a task.
type Cell struct {
	Key  string
	Task Task
	Axes map[string]string
}

// Cells returns every combination of the spec's tasks and axes, in spec order.
func (s *Spec) Cells() []Cell {
	cells := []Cell{{Axes: map[string]string{}}}
	for _, ax := range s.Axes {
		var next []Cell
		for _, c := range cells {
			for _, v := range ax.Values {
				axes := map[string]string{}
				for k, x := range c.Axes {
					axes[k] = x
				}
				axes[ax.Name] = v
				next = append(next, Cell{Axes: axes})
			}
		}
		cells = next
	}
	var out []Cell
	for _, t := range s.Tasks {
		for _, c := range cells {
			c.Task = t
			var parts []string
			if len(s.Tasks) > 1 {
				parts = append(parts, "task="+t.ID)
			}
			for _, ax := range s.Axes {
				parts = append(parts, ax.Name+"="+c.Axes[ax.Name])
			}
			c.Key = strings.Join(parts, ",")
			if c.Key == "" {
				c.Key = "main"
			}
			out = append(out, c)
		}
	}
	return out
}

// NewPlan plans a run of the spec over the given conditions: cells x conditions x reps.
// reps <= 0 takes the spec's replicates; concurrency <= 0 the spec's limit, else 1.
func NewPlan(s *Spec, conditions []string, reps, concurrency int) (*Plan, error) {
	if len(conditions) == 0 {
		return nil, fmt.Errorf("nothing to run: no conditions")
	}
	if msg := ReplicatesProblem("replicates", int64(reps)); reps != 0 && msg != "" {
		return nil, errors.New(msg)
	}
	if msg := ConcurrencyProblem("concurrency", int64(concurrency)); msg != "" {
		return nil, errors.New(msg)
	}
	if reps <= 0 {
		reps = max(s.Replicates, 1)
	}
	if concurrency <= 0 {
		concurrency = max(s.Limits.Concurrency, 1)
	}
	// Counted before anything is built: the plan travels whole in the workflow's input.
	cells := s.CellCount()
	if n := cells * int64(len(conditions)) * int64(reps); cells > MaxTrials || n > MaxTrials || n < 0 {
		return nil, fmt.Errorf("the run would have %s trials (%s x %d conditions x %d replicates); a run has at most %d: lower --reps or the spec's replicates, pick conditions with --only, or use fewer axis values",
			countText(cells*int64(len(conditions))*int64(reps), cells > MaxTrials), cellsText(cells), len(conditions), reps, MaxTrials)
	}
	p := &Plan{SpecName: s.Name, Conditions: conditions, Replicates: reps, Concurrency: concurrency, Layout: newLayout(s)}
	// A trial id names a folder and a workflow: two trials with one id would be one trial.
	// The loader refuses axis values that collide; this catches any other way.
	cellOf := map[string]string{}
	for _, c := range s.Cells() {
		if other, ok := cellOf[PathSafe(c.Key)]; ok {
			return nil, fmt.Errorf("cells %q and %q both name the trials %s: make their task ids or axis values differ in letters, digits or ._=@#,-", other, c.Key, PathSafe(c.Key))
		}
		cellOf[PathSafe(c.Key)] = c.Key
	}
	condOf := map[string]string{}
	for _, cond := range conditions {
		if other, ok := condOf[PathSafe(cond)]; ok {
			return nil, fmt.Errorf("conditions %q and %q both name the trials %s: rename one", other, cond, PathSafe(cond))
		}
		condOf[PathSafe(cond)] = cond
	}
	for _, c := range s.Cells() {
		p.Cells = append(p.Cells, c.Key)
		for _, cond := range conditions {
			for rep := 1; rep <= reps; rep++ {
				p.Trials = append(p.Trials, TrialPlan{
					ID:   TrialID(c.Key, cond, rep),
					Cell: c.Key, Axes: c.Axes, Task: c.Task.ID, Condition: cond, Rep: rep,
					Seed: TrialSeed(s.Seed, c.Key, rep),
				})
			}
		}
	}
	return p, nil
}

// MaxTrials bounds a run: its plan is held in memory by the client and the workflow,
// so a mistyped flag must not plan a billion trials.
const MaxTrials = 10_000

// MaxReplicates bounds replicates, in the spec and on the command line.
const MaxReplicates = 10_000

// ReplicatesProblem is what is wrong with a number of replicates, or "".
func ReplicatesProblem(what string, v int64) string {
	switch {
	case v < 1:
		return fmt.Sprintf("%s must be at least 1, got %d", what, v)
	case v > MaxReplicates:
		return fmt.Sprintf("%s must be at most %d, got %d", what, MaxReplicates, v)
	}
	return ""
}

// ConcurrencyProblem is what is wrong with a concurrency (0: the default), or "".
func ConcurrencyProblem(what string, v int64) string {
	switch {
	case v < 0:
		return fmt.Sprintf("%s must be 0 or more, got %d", what, v)
	case v > math.MaxInt32:
		return fmt.Sprintf("%s is too large: %d", what, v)
	}
	return ""
}

// CellCount is the number of cells, without making them; past MaxTrials it stops
// counting and returns MaxTrials+1.
func (s *Spec) CellCount() int64 {
	n := int64(max(len(s.Tasks), 1))
	for _, a := range s.Axes {
		n *= int64(len(a.Values))
		if n > MaxTrials {
			return MaxTrials + 1
		}
	}
	return n
}

func cellsText(cells int64) string {
	if cells > MaxTrials {
		return fmt.Sprintf("more than %d cells", MaxTrials)
	}
	return fmt.Sprintf("%d cells", cells)
}

func countText(n int64, over bool) string {
	if over || n < 0 {
		return fmt.Sprintf("more than %d", MaxTrials)
	}
	return fmt.Sprint(n)
}

// Summary is the plan in one line.
func (p *Plan) Summary() string {
	cells := ""
	if len(p.Cells) > 1 {
		cells = fmt.Sprintf("%d cells x ", len(p.Cells))
	}
	return fmt.Sprintf("plan %d trials of %s: %s%d conditions x %d replicates, concurrency %d",
		len(p.Trials), p.SpecName, cells, len(p.Conditions), p.Replicates, p.Concurrency)
}

// TrialSeed derives a trial's seed from the spec's seed, the cell and the replicate.
func TrialSeed(seed int64, cell string, rep int) int64 {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(seed))
	h.Write(b[:])
	fmt.Fprintf(h, "|%s|%d", cell, rep)
	return int64(h.Sum64() & (1<<62 - 1))
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._=@#,-]+`)

// TrialID is cell/condition/rep, with characters unsafe in paths replaced.
func TrialID(cell, condition string, rep int) string {
	return fmt.Sprintf("%s/%s/%d", PathSafe(cell), PathSafe(condition), rep)
}

// PathSafe replaces characters that are unsafe in a file name; what is left is one name
// (never empty, "." or "..": those are "_", "_.", "_..").
func PathSafe(s string) string {
	s = unsafeChars.ReplaceAllString(s, "_")
	if s == "" || s == "." || s == ".." {
		s = "_" + s
	}
	return s
}

// SortedAxes returns the axis names of a cell, sorted.
func SortedAxes(axes map[string]string) []string {
	var out []string
	for k := range axes {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ReuseSeeds gives every trial the seed that seed returns for its cell and replicate (a
// paired run's), records where they came from, and returns how many trials got one. A
// trial whose cell and replicate the other run lacks keeps its own seed.
func (p *Plan) ReuseSeeds(from string, seed func(cell string, rep int) (int64, bool)) int {
	n := 0
	for i, t := range p.Trials {
		if s, ok := seed(t.Cell, t.Rep); ok {
			p.Trials[i].Seed = s
			if p.Layout != nil {
				p.Layout.reuseSeed(p, i, s)
			}
			n++
		}
	}
	p.PairedWith = from
	return n
}
