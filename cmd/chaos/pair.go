package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
)

// PairLatest is the --pair-with value that picks the newest clean run of the same spec.
const PairLatest = "latest"

// pastRun is a finished run folder as --pair-with reads it.
type pastRun struct {
	dir      string
	id       string
	name     string // the spec's name
	started  time.Time
	armed    bool
	identity string
	results  []run.TrialResult
}

// readPastRun reads manifest.json and verdicts.json of a finished run folder.
func readPastRun(dir string) (*pastRun, error) {
	var m struct {
		RunID   string    `json:"run_id"`
		Started time.Time `json:"started"`
		Spec    struct {
			Name     string `json:"name"`
			Identity string `json:"identity"`
		} `json:"spec"`
		Model struct {
			Armed bool `json:"armed"`
		} `json:"model"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return nil, fmt.Errorf("%s is not a finished run folder: %w", dir, err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: manifest.json: %w", dir, err)
	}
	r := &pastRun{dir: dir, id: m.RunID, name: m.Spec.Name, started: m.Started, armed: m.Model.Armed, identity: m.Spec.Identity}
	if b, err = os.ReadFile(filepath.Join(dir, "verdicts.json")); err != nil {
		return nil, fmt.Errorf("%s is not a finished run folder: %w", dir, err)
	}
	if err := json.Unmarshal(b, &r.results); err != nil {
		return nil, fmt.Errorf("%s: verdicts.json: %w", dir, err)
	}
	return r, nil
}

// spec is the spec the run ran, from the copy in one of its trial folders.
func (r *pastRun) spec() (*spec.Spec, error) {
	paths, _ := filepath.Glob(filepath.Join(r.dir, "trials", "*", "*", "*", "spec.yaml"))
	sort.Strings(paths)
	if len(paths) == 0 {
		return nil, fmt.Errorf("run %s has no trial folder with its spec.yaml", r.dir)
	}
	data, err := os.ReadFile(paths[0])
	if err != nil {
		return nil, err
	}
	s, err := spec.Parse(paths[0], data)
	if err != nil {
		return nil, fmt.Errorf("the spec of run %s: %w", r.dir, err)
	}
	if r.name != "" {
		s.Name = r.name // a spec without name: is named after its file, not the copy's
		for i := range s.Tasks {
			if s.Tasks[i].ID == "spec" {
				s.Tasks[i].ID = r.name
			}
		}
	}
	return s, nil
}

// sameSpec says why the past run cannot be paired with a run of s ("" when it can): its
// spec must differ from s in the model table at most.
func (r *pastRun) sameSpec(s *spec.Spec) string {
	other, err := r.spec()
	if err != nil {
		if r.identity != "" && r.identity == s.Identity() {
			return ""
		}
		return err.Error()
	}
	if diff := spec.IdentityDiff(other, s); len(diff) > 0 {
		return fmt.Sprintf("its spec differs from %s in more than the model table: %s", s.Path, strings.Join(diff, ", "))
	}
	return ""
}

// pairRoot is the folder where --pair-with latest looks: where this run's folder goes.
func pairRoot(opts *RunOptions, s *spec.Spec) string {
	if opts.Out != "" {
		return filepath.Dir(filepath.Clean(opts.Out))
	}
	return runsDir(opts, s)
}

// latestCleanRun is the newest finished run under root of the same spec in which no
// model fault was armed.
func latestCleanRun(root string, s *spec.Spec, exclude string) (*pastRun, error) {
	entries, err := os.ReadDir(root)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	var best *pastRun
	var skipped []string
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		if !e.IsDir() || sameDir(dir, exclude) {
			continue
		}
		r, err := readPastRun(dir)
		if err != nil || r.armed {
			continue
		}
		if why := r.sameSpec(s); why != "" {
			skipped = append(skipped, e.Name())
			continue
		}
		if best == nil || r.started.After(best.started) || (r.started.Equal(best.started) && dir > best.dir) {
			best = r
		}
	}
	if best == nil {
		msg := fmt.Sprintf("--pair-with latest: no finished clean run of %s in %s to take the seeds of (run the spec without a model fault first, or give a run folder)", s.Name, root)
		if len(skipped) > 0 {
			msg += fmt.Sprintf("; runs of other specs there: %s", strings.Join(skipped, ", "))
		}
		return nil, errors.New(msg)
	}
	return best, nil
}

func sameDir(a, b string) bool {
	if b == "" {
		return false
	}
	x, err1 := filepath.Abs(a)
	y, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && x == y
}

// pairPlan gives the plan the seeds of the run --pair-with names, by cell and replicate,
// after checking that its spec is this one but for the model table. It returns the line
// to print.
func pairPlan(opts *RunOptions, s *spec.Spec, p *spec.Plan) (string, error) {
	var other *pastRun
	var err error
	if opts.PairWith == PairLatest {
		other, err = latestCleanRun(pairRoot(opts, s), s, opts.Out)
	} else {
		other, err = readPastRun(opts.PairWith)
		if err == nil {
			if why := other.sameSpec(s); why != "" {
				err = fmt.Errorf("--pair-with %s: %s", opts.PairWith, why)
			}
		}
	}
	if err != nil {
		return "", badInput(err)
	}
	type cellRep struct {
		cell string
		rep  int
	}
	seeds := map[cellRep]int64{}
	for _, t := range other.results {
		k := cellRep{t.Cell, t.Rep}
		if _, ok := seeds[k]; !ok {
			seeds[k] = t.Seed
		}
	}
	abs, _ := filepath.Abs(other.dir)
	n := p.ReuseSeeds(abs, func(cell string, rep int) (int64, bool) {
		seed, ok := seeds[cellRep{cell, rep}]
		return seed, ok
	})
	if n == 0 {
		return "", badInput(fmt.Errorf("--pair-with %s: run %s has no trial with a cell and replicate of this plan, so no seed to share", opts.PairWith, other.dir))
	}
	return fmt.Sprintf("paired with run %s (%s): %d of %d trials reuse its seeds", other.id, abs, n, len(p.Trials)), nil
}

// noModelCalls is the exit-3 error of a run whose model fault was never tested: every
// trial that ran saw no model call at the proxy. nil otherwise.
func noModelCalls(s *spec.Spec, results []run.TrialResult) error {
	if !s.Model.Armed() {
		return nil
	}
	ran, calls := 0, 0
	for _, r := range results {
		if r.Model != nil {
			ran++
			calls += r.Model.Calls
		}
	}
	return noModelCallsIn(s, ran, calls)
}

// noModelCallsIn is noModelCalls from the counts of trials with a model proxy and of the
// calls that reached one (run.Summary's ModelTrials and ModelCalls).
func noModelCallsIn(s *spec.Spec, ran, calls int) error {
	if !s.Model.Armed() || ran == 0 || calls > 0 {
		return nil
	}
	return &ExitError{Code: ExitUnexpected, Err: fmt.Errorf("no model call reached the model proxy in any of the %d trials, so model fault %s was never tested: "+
		"point the agent's model client at {llm_url} (its base URL setting, e.g. OPENAI_BASE_URL or ANTHROPIC_BASE_URL)", ran, s.Model.FaultName())}
}
