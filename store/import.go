package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
)

// RunRowOf is the runs row of a run read from its folder (report.LoadRun), as Aggregate
// writes it: the manifest's fields, finished = the trials with a result, and the trials
// counted by verdict (an unjudged trial has none) and by outcome. OutDir is r.Dir; host is
// the host the folder is on. A folder that cannot be a run's (no run id, no start time,
// a trial without an id or listed twice) is an error naming the file to look at.
func RunRowOf(r *report.Run, host string) (RunRow, error) {
	m := r.Manifest
	if m.RunID == "" {
		return RunRow{}, fmt.Errorf("manifest.json has no run_id")
	}
	started, err := time.Parse(time.RFC3339Nano, m.Started)
	if err != nil || started.IsZero() {
		return RunRow{}, fmt.Errorf("manifest.json has no valid start time (started %q)", m.Started)
	}
	var ended time.Time
	if m.Ended != "" {
		if ended, err = time.Parse(time.RFC3339Nano, m.Ended); err != nil {
			return RunRow{}, fmt.Errorf("manifest.json has no valid end time (ended %q)", m.Ended)
		}
	}
	row := RunRow{
		RunID: m.RunID, SpecName: m.Spec.Name, SpecPath: m.Spec.Path, Plan: m.Plan,
		Conditions: m.Conditions, Cells: m.Cells, Trials: m.Trials, Finished: len(r.Results),
		Started: started, Ended: ended, Aborted: m.Aborted, AgentCommand: m.AgentCommand,
		OutDir: r.Dir, Host: host, ByVerdict: map[string]int{}, ByOutcome: map[string]int{},
	}
	seen := map[string]bool{}
	for i, t := range r.Results {
		if t.ID == "" {
			return RunRow{}, fmt.Errorf("verdicts.json: trial %d has no id", i+1)
		}
		if seen[t.ID] {
			return RunRow{}, fmt.Errorf("verdicts.json lists trial %s twice", t.ID)
		}
		seen[t.ID] = true
		row.ByOutcome[t.Outcome]++
		if t.Verdict != "" {
			row.ByVerdict[t.Verdict]++
		}
	}
	return row, nil
}

// RecordedCalls reads the call and rejected rows of every trial's record
// (trials/<id>/record.jsonl in the run folder outDir, else the trial's own Dir). A record
// that cannot be read gives what it has: the results database is a copy, and the folder
// keeps the evidence of a damaged record.
func RecordedCalls(outDir string, results []run.TrialResult) []Call {
	var calls []Call
	for _, t := range results {
		path := filepath.Join(outDir, "trials", filepath.FromSlash(t.ID), "record.jsonl")
		if _, err := os.Stat(path); err != nil && t.Dir != "" {
			path = filepath.Join(t.Dir, "record.jsonl")
		}
		l, _ := record.ReadFile(path)
		if l == nil {
			continue
		}
		for _, r := range l.Rows {
			if r.Type == record.TypeCall || r.Type == record.TypeRejected {
				calls = append(calls, Call{TrialID: t.ID, Row: r})
			}
		}
	}
	return calls
}

// Imported says what ImportRun found in the database before it wrote.
type Imported struct {
	// Existed is true when the run's row was there already; TrialsBefore is how many of
	// its trials were.
	Existed      bool
	TrialsBefore int
}

// ImportRun writes a run read back from its folder: the run and its trials (and, when
// given, their calls and the comparison with the previous run of its schedule) in one
// transaction, with the statements of WriteRun and WriteComparison. So importing a run
// twice, or a run Aggregate already wrote, adds no row; and a failure leaves nothing of
// the run written.
func (s *Store) ImportRun(ctx context.Context, r RunRow, trials []run.TrialResult, calls []Call, cmp *Comparison) (Imported, error) {
	var got Imported
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM runs WHERE run_id = $1),
       (SELECT count(*) FROM trials WHERE run_id = $1)`, r.RunID).Scan(&got.Existed, &got.TrialsBefore); err != nil {
			return err
		}
		if err := writeRun(ctx, tx, r, trials, calls); err != nil {
			return err
		}
		if cmp == nil {
			return nil
		}
		c := *cmp
		c.RunID = r.RunID
		return writeComparison(ctx, tx, c)
	})
	return got, err
}
