package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
)

// Run is a run folder read back: what was asked and every trial's result.
type Run struct {
	Dir      string
	Manifest Manifest
	Results  []run.TrialResult
}

// Manifest is the part of manifest.json a report needs.
type Manifest struct {
	RunID string `json:"run_id"`
	Spec  struct {
		Name string `json:"name"`
		Path string `json:"path,omitempty"`
	} `json:"spec"`
	Plan         string   `json:"plan"`
	Conditions   []string `json:"conditions"`
	Cells        []string `json:"cells,omitempty"`
	Trials       int      `json:"trials"`
	Started      string   `json:"started"`
	Ended        string   `json:"ended"`
	AgentCommand string   `json:"agent_command,omitempty"`
	Aborted      string   `json:"aborted,omitempty"`
	Profile      string   `json:"profile,omitempty"`
	Language     string   `json:"language,omitempty"`
	// Outcomes names the outcomes the spec declares, by kind.
	Outcomes OutcomeNames `json:"outcomes,omitzero"`
	// Gates are the bars the run was asked to clear (chaos run --gate).
	Gates []Gate `json:"gates,omitempty"`
}

// OutcomeNames are the names of a spec's declared outcomes: failures are bad when they
// hold, successes when they do not.
type OutcomeNames struct {
	Failures  []string `json:"failures,omitempty"`
	Successes []string `json:"successes,omitempty"`
}

// OutcomeNamesOf are the names of the outcomes a spec declares.
func OutcomeNamesOf(o spec.Outcomes) OutcomeNames {
	var n OutcomeNames
	for _, x := range o.Failures {
		n.Failures = append(n.Failures, x.Name)
	}
	for _, x := range o.Successes {
		n.Successes = append(n.Successes, x.Name)
	}
	return n
}

// LoadRun reads manifest.json and verdicts.json from a run folder.
func LoadRun(dir string) (*Run, error) {
	r := &Run{Dir: dir}
	if err := readJSON(filepath.Join(dir, "manifest.json"), &r.Manifest); err != nil {
		return nil, fmt.Errorf("%s is not a run folder: %w", dir, err)
	}
	if err := readJSON(filepath.Join(dir, "verdicts.json"), &r.Results); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return r, nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return nil
}

// Rows reads a trial's record, tolerating damage: the rows before a corrupt line and the
// reason it stopped.
func (r *Run) Rows(t run.TrialResult) ([]record.Row, string) {
	dir := t.Dir
	if dir == "" {
		dir = filepath.Join(r.Dir, "trials", t.ID)
	}
	l, err := record.ReadFile(filepath.Join(dir, "record.jsonl"))
	if l == nil {
		return nil, err.Error()
	}
	if err != nil {
		return l.Rows, err.Error()
	}
	return l.Rows, ""
}
