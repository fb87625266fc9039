package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
)

// pairSpec is a small spec with a model table; seed and fault vary per test.
func pairSpec(seed, fault string) string {
	return `name: pairing
task: triage the ticket
agent: {command: "agent --llm {llm_url}"}
tools:
  - {name: update_ticket, effect: write}
seed: ` + seed + `
replicates: 2
model:
  upstream: http://127.0.0.1:9/v1
  fault: ` + fault + `
`
}

// writeRun writes a finished run folder of specText: its manifest, its verdicts (one
// trial per replicate of cell main, condition clean, with the given seeds) and the spec
// in each trial folder.
func writeRun(t *testing.T, dir, specText string, started time.Time, armed bool, seeds ...int64) {
	t.Helper()
	var results []run.TrialResult
	for i, seed := range seeds {
		id := spec.TrialID("main", "clean", i+1)
		results = append(results, run.TrialResult{ID: id, Cell: "main", Condition: "clean", Rep: i + 1, Seed: seed})
		trial := filepath.Join(dir, "trials", filepath.FromSlash(id))
		if err := os.MkdirAll(trial, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(trial, "spec.yaml"), []byte(specText), 0o644)
	}
	m := map[string]any{"run_id": filepath.Base(dir), "started": started, "spec": map[string]any{"name": "pairing"}, "model": map[string]any{"armed": armed}}
	for name, v := range map[string]any{"manifest.json": m, "verdicts.json": results} {
		b, _ := json.Marshal(v)
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPairWith: --pair-with takes the seeds of another run by cell and replicate, from
// a folder or the latest clean run of the same spec beside the new run's folder, and
// refuses a run of a spec that differs in more than the model table.
func TestPairWith(t *testing.T) {
	root := t.TempDir()
	runs := filepath.Join(root, "runs")
	specPath := filepath.Join(root, "faulted.yaml")
	os.WriteFile(specPath, []byte(pairSpec("7", "tool_error_single")), 0o644)
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	clean := pairSpec("7", "none")
	writeRun(t, filepath.Join(runs, "a-old"), clean, t0, false, 101, 102)
	writeRun(t, filepath.Join(runs, "b-new"), clean, t0.Add(time.Hour), false, 201, 202)
	writeRun(t, filepath.Join(runs, "c-faulted"), pairSpec("7", "tool_error_single"), t0.Add(2*time.Hour), true, 301, 302)
	writeRun(t, filepath.Join(runs, "d-other-seed"), pairSpec("8", "none"), t0.Add(3*time.Hour), false, 401, 402)
	writeRun(t, filepath.Join(root, "one-rep"), clean, t0, false, 501)

	plan := func(pairWith string) (*spec.Plan, string, error) {
		var out bytes.Buffer
		opts := &RunOptions{IO: &IOStreams{Out: &out, ErrOut: &out}, Spec: specPath, PairWith: pairWith, Out: filepath.Join(runs, "new"), Only: []string{"clean"}}
		_, _, p, line, err := planPairedRun(opts)
		return p, line, err
	}
	seeds := func(p *spec.Plan) []int64 {
		var out []int64
		for _, tr := range p.Trials {
			out = append(out, tr.Seed)
		}
		return out
	}

	// latest: the newest clean run of the same spec, not the faulted one or another seed's.
	p, line, err := plan(PairLatest)
	if err != nil {
		t.Fatal(err)
	}
	if got := seeds(p); !slices.Equal(got, []int64{201, 202}) || p.PairedWith != filepath.Join(runs, "b-new") ||
		line != "paired with run b-new ("+filepath.Join(runs, "b-new")+"): 2 of 2 trials reuse its seeds" {
		t.Errorf("latest: seeds %v, paired with %q, line %q", got, p.PairedWith, line)
	}

	// A folder: its seeds by cell and replicate; a replicate it lacks keeps its own.
	p, line, err = plan(filepath.Join(root, "one-rep"))
	if err != nil {
		t.Fatal(err)
	}
	if got := seeds(p); got[0] != 501 || got[1] != spec.TrialSeed(7, "main", 2) || !strings.HasSuffix(line, ": 1 of 2 trials reuse its seeds") {
		t.Errorf("one-rep: seeds %v, line %q", got, line)
	}

	// Refusals, all bad input.
	for _, tc := range []struct{ pairWith, want string }{
		{filepath.Join(runs, "d-other-seed"), "its spec differs from " + specPath + " in more than the model table: seed"},
		{filepath.Join(root, "nope"), "is not a finished run folder"},
	} {
		_, _, err := plan(tc.pairWith)
		if ExitCode(err) != ExitBadInput || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--pair-with %s: %v, want exit 1 saying %q", tc.pairWith, err, tc.want)
		}
	}
	os.RemoveAll(filepath.Join(runs, "a-old"))
	os.RemoveAll(filepath.Join(runs, "b-new"))
	if _, _, err := plan(PairLatest); ExitCode(err) != ExitBadInput || !strings.Contains(err.Error(), "no finished clean run of pairing in "+runs) {
		t.Errorf("latest with no clean run: %v", err)
	}
}

// TestNoModelCalls: exit 3 when every faulted trial that ran saw no model call.
func TestNoModelCalls(t *testing.T) {
	armed, err := spec.Parse("s.yaml", []byte(pairSpec("7", "tool_error_single")))
	if err != nil {
		t.Fatal(err)
	}
	clean, _ := spec.Parse("s.yaml", []byte(pairSpec("7", "none")))
	none := &run.ModelResult{Fault: "tool_error_single"}
	some := &run.ModelResult{Fault: "tool_error_single", Calls: 3}
	tests := []struct {
		name    string
		s       *spec.Spec
		results []run.TrialResult
		exit3   bool
	}{
		{"no call in any trial", armed, []run.TrialResult{{Model: none}, {Model: none}, {}}, true},
		{"a call in one trial", armed, []run.TrialResult{{Model: none}, {Model: some}}, false},
		{"no trial ran", armed, []run.TrialResult{{}, {}}, false},
		{"clean run", clean, []run.TrialResult{{Model: &run.ModelResult{Fault: "none"}}}, false},
	}
	for _, tt := range tests {
		err := noModelCalls(tt.s, tt.results)
		var ee *ExitError
		if got := errors.As(err, &ee) && ee.Code == ExitUnexpected; got != tt.exit3 {
			t.Errorf("%s: %v, want exit 3 %v", tt.name, err, tt.exit3)
		}
		if tt.exit3 && !strings.Contains(err.Error(), "no model call reached the model proxy in any of the 2 trials, so model fault tool_error_single was never tested") {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
}
