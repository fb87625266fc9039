package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/crashwall/chaos/cost"
	"github.com/crashwall/chaos/run"
)

// writeRunFolder writes the manifest and verdicts of a finished run of spec whose trials
// each cost usd (0: no model calls).
func writeRunFolder(t *testing.T, dir, runID, spec string, usd float64, trials int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	m := map[string]any{"run_id": runID, "spec": map[string]any{"name": spec}}
	var rs []run.TrialResult
	for i := range trials {
		r := run.TrialResult{ID: "t", Cell: "main", Condition: "clean", Rep: i + 1}
		if usd > 0 {
			r.Cost = &run.TrialCost{Usage: cost.Usage{Calls: 2, USD: usd}}
		}
		rs = append(rs, r)
	}
	for name, v := range map[string]any{"manifest.json": m, "verdicts.json": rs} {
		b, _ := json.Marshal(v)
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestEstimateFromOutRuns: runs written with --out sit beside the new run's folder, not in
// chaos-runs/<spec>; the estimate finds them there, the newest of the same spec first, and
// never takes another spec's run for this one's.
func TestEstimateFromOutRuns(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(root, "runs")
	writeRunFolder(t, filepath.Join(out, "first"), "20261101-100000-aaaaaa", "portal", 0.10, 2)
	writeRunFolder(t, filepath.Join(out, "second"), "20261102-100000-bbbbbb", "portal", 0.30, 2)
	writeRunFolder(t, filepath.Join(out, "other-spec"), "20261103-100000-cccccc", "support-ticket", 9, 2)
	writeRunFolder(t, filepath.Join(out, "no-model"), "20261104-100000-dddddd", "portal", 0, 2)

	per, from, ok := estimateTrialCost("portal", filepath.Join(root, "chaos-runs", "portal"), out)
	if !ok || per != 0.30 || from != "20261102-100000-bbbbbb" {
		t.Errorf("estimate %v from %q (%v), want $0.30 a trial from the newest portal run with a cost", per, from, ok)
	}
	line, _ := costPlanLine("portal", []string{filepath.Join(root, "chaos-runs", "portal"), out}, 10, 1)
	if want := "estimated cost: $3.00 ($0.30 a trial, as in run 20261102-100000-bbbbbb); budget $1.00"; line != want {
		t.Errorf("plan line %q, want %q", line, want)
	}
	if _, _, ok := estimateTrialCost("portal", filepath.Join(root, "chaos-runs", "portal")); ok {
		t.Errorf("an estimate from a folder with no runs")
	}
}
