package runfolder

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeRunFolder writes the manifest.json and verdicts.json of a run of two trials.
func writeRunFolder(t *testing.T, dir, id string, started time.Time) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	m := map[string]any{"run_id": id, "spec": map[string]string{"name": "s"}, "plan": "p", "conditions": []string{"clean"},
		"trials": 2, "started": started, "ended": started.Add(time.Minute)}
	v := []map[string]any{
		{"id": "main/clean/1", "cell": "main", "condition": "clean", "rep": 1, "outcome": "completed", "verdict": "correct"},
		{"id": "main/clean/2", "cell": "main", "condition": "clean", "rep": 2, "outcome": "failed"},
	}
	for name, x := range map[string]any{"manifest.json": m, "verdicts.json": v} {
		b, _ := json.Marshal(x)
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRunFolders: an argument is a run folder, a folder of them (chaos-runs/<spec>/) or a
// folder of those (chaos-runs/); anything else is named as not a run folder.
func TestRunFolders(t *testing.T) {
	root := filepath.Join(t.TempDir(), "chaos-runs")
	day := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	writeRunFolder(t, filepath.Join(root, "a", "r1"), "r1", day)
	writeRunFolder(t, filepath.Join(root, "a", "r2"), "r2", day)
	writeRunFolder(t, filepath.Join(root, "b", "r3"), "r3", day)
	os.MkdirAll(filepath.Join(root, "b", "not-a-run"), 0o755)

	for arg, want := range map[string]int{filepath.Join(root, "a", "r1"): 1, filepath.Join(root, "a"): 2, filepath.Join(root, "b"): 1, root: 3} {
		got, err := Find(arg)
		if err != nil || len(got) != want {
			t.Errorf("Find(%s) = %v, %v; want %d folders", arg, got, err, want)
		}
	}
	for arg, want := range map[string]string{
		filepath.Join(root, "b", "not-a-run"):           "is not a run folder: it has no manifest.json, and no run folder is in it",
		filepath.Join(root, "nowhere"):                  "does not exist",
		filepath.Join(root, "a", "r1", "manifest.json"): "is not a run folder: it is a file",
	} {
		if _, err := Find(arg); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Find(%s) = %v, want %q", arg, err, want)
		}
	}
}

// TestReadRunFolder: the run's row as Aggregate writes it, its comparison when it has one,
// and a damaged or incomplete folder named with the file to look at.
func TestReadRunFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r1")
	started := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	writeRunFolder(t, dir, "r1", started)
	r, err := Read(dir, "host1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Row.RunID != "r1" || r.Row.Finished != 2 || r.Row.ByVerdict["correct"] != 1 || len(r.Row.ByVerdict) != 1 ||
		r.Row.ByOutcome["failed"] != 1 || !r.Row.Started.Equal(started) || r.Row.OutDir != dir || r.Row.Host != "host1" || r.Comparison != nil {
		t.Errorf("row %+v, comparison %v", r.Row, r.Comparison)
	}

	cmp := `{"schedule": "nightly", "previous_run_id": "r0", "rows": [
  {"cell": "main", "condition": "clean", "a": {"k": 0, "n": 2}, "b": {"k": 2, "n": 2}, "p": 0.5, "method": "McNemar", "call": "worse"},
  {"cell": "main", "condition": "clean", "outcome": "ticket_saved", "a": {"k": 0, "n": 2}, "b": {"k": 0, "n": 2}, "p": 1, "method": "McNemar", "call": "same"}]}`
	os.WriteFile(filepath.Join(dir, "comparison.json"), []byte(cmp), 0o644)
	r, err = Read(dir, "host1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Comparison == nil || r.Comparison.RunID != "r1" || r.Comparison.Schedule != "nightly" || r.Comparison.PreviousRunID != "r0" || len(r.Comparison.Rows) != 1 || !r.Comparison.Regressed() {
		t.Errorf("comparison %+v: want nightly against r0, the one silent-wrong row, regressed", r.Comparison)
	}

	for _, tc := range []struct {
		file, text, want string
	}{
		{"comparison.json", `{"schedule": `, "is damaged: comparison.json: unexpected end of JSON input"},
		{"verdicts.json", `[{"id": "x"`, "is damaged: verdicts.json: unexpected end of JSON input"},
		{"manifest.json", `{}`, "is damaged: manifest.json has no run_id"},
		{"verdicts.json", "", "is incomplete: it has manifest.json but no verdicts.json"},
	} {
		d := filepath.Join(t.TempDir(), "r")
		writeRunFolder(t, d, "r", started)
		path := filepath.Join(d, tc.file)
		if tc.text == "" {
			os.Remove(path)
		} else {
			os.WriteFile(path, []byte(tc.text), 0o644)
		}
		_, err := Read(d, "h")
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), d) {
			t.Errorf("%s %q: %v, want %q naming the folder", tc.file, tc.text, err, tc.want)
		}
	}
}
