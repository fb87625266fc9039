// Package runfolder reads the run folders chaos run writes (manifest.json, verdicts.json,
// the trials' results, a scheduled run's comparison.json) into the rows the results
// database imports.
package runfolder

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/store"
)

// Run is a run read from its folder, ready to import.
type Run struct {
	// Dir is the folder, made absolute.
	Dir        string
	Row        store.RunRow
	Results    []run.TrialResult
	Comparison *store.Comparison
}

// Find resolves an argument to run folders: the folder itself when it holds
// manifest.json, else the run folders in it (chaos-runs/<spec>/), else those one level
// further down (chaos-runs/).
func Find(arg string) ([]string, error) {
	fi, err := os.Stat(arg)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s does not exist (give a run folder, such as chaos-runs/<spec>/<run id>, or a folder of them)", arg)
		}
		return nil, fmt.Errorf("%s: %v", arg, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a run folder: it is a file (give the folder that holds manifest.json and verdicts.json)", arg)
	}
	if isRunFolder(arg) {
		return []string{arg}, nil
	}
	for _, pattern := range []string{filepath.Join(arg, "*"), filepath.Join(arg, "*", "*")} {
		matches, err := filepath.Glob(pattern)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", arg, err)
		}
		var dirs []string
		for _, m := range matches {
			if isRunFolder(m) {
				dirs = append(dirs, m)
			}
		}
		if len(dirs) > 0 {
			return dirs, nil
		}
	}
	return nil, fmt.Errorf("%s is not a run folder: it has no manifest.json, and no run folder is in it (a run that never ended has none; give the folder chaos run wrote, or a folder of them)", arg)
}

func isRunFolder(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, "manifest.json"))
	return err == nil && fi.Mode().IsRegular()
}

// Read reads a run folder with the reader chaos show and report use (report.LoadRun),
// and its comparison.json when a schedule ran it; host is the row's host.
func Read(dir, host string) (Run, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Run{}, fmt.Errorf("%s: %v", dir, err)
	}
	damaged := func(err error) error {
		return fmt.Errorf("run folder %s is damaged: %v; nothing of it was imported (restore the file, or leave this folder out)", dir, err)
	}
	rep, err := report.LoadRun(abs)
	if err != nil {
		if _, statErr := os.Stat(filepath.Join(abs, "verdicts.json")); errors.Is(statErr, fs.ErrNotExist) {
			return Run{}, fmt.Errorf("run folder %s is incomplete: it has manifest.json but no verdicts.json; nothing of it was imported", dir)
		}
		// LoadRun's error names the folder; its inner one names the file and what is wrong.
		if inner := errors.Unwrap(err); inner != nil {
			err = inner
		}
		return Run{}, damaged(err)
	}
	row, err := store.RunRowOf(rep, host)
	if err != nil {
		return Run{}, damaged(err)
	}
	r := Run{Dir: abs, Row: row, Results: rep.Results}
	cmp, err := readComparison(abs)
	if err != nil {
		return Run{}, damaged(err)
	}
	if cmp != nil {
		cmp.RunID = row.RunID
		r.Comparison = cmp
	}
	return r, nil
}

// readComparison reads comparison.json, which CompareScheduledRun writes into a
// scheduled run's folder (nil: the run was not scheduled).
func readComparison(dir string) (*store.Comparison, error) {
	b, err := os.ReadFile(filepath.Join(dir, "comparison.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var c struct {
		Schedule      string           `json:"schedule"`
		PreviousRunID string           `json:"previous_run_id"`
		Rows          []report.DiffRow `json:"rows"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("comparison.json: %v", err)
	}
	if c.Schedule == "" {
		return nil, fmt.Errorf("comparison.json names no schedule")
	}
	cmp := &store.Comparison{Schedule: c.Schedule, PreviousRunID: c.PreviousRunID}
	for _, r := range c.Rows {
		// The comparisons table holds the silent-wrong rate per cell and condition; a row
		// of a declared outcome (chaos diff's) has no place there.
		if r.Outcome == "" {
			cmp.Rows = append(cmp.Rows, r)
		}
	}
	return cmp, nil
}
