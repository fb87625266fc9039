package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
)

// ErrNoRun is returned by LoadRun for a run id the database does not have.
var ErrNoRun = errors.New("no such run in the results database")

const runColumns = `run_id, spec_name, spec_path, plan, conditions, cells, trials, finished, started,
coalesce(ended, started), aborted, agent_command, out_dir, host, by_verdict, by_outcome, schedule,
previous_run_id, regressed`

func scanRun(row pgx.Row) (RunRow, error) {
	var r RunRow
	var byVerdict, byOutcome []byte
	err := row.Scan(&r.RunID, &r.SpecName, &r.SpecPath, &r.Plan, &r.Conditions, &r.Cells, &r.Trials, &r.Finished,
		&r.Started, &r.Ended, &r.Aborted, &r.AgentCommand, &r.OutDir, &r.Host, &byVerdict, &byOutcome,
		&r.Schedule, &r.PreviousRunID, &r.Regressed)
	if err != nil {
		return r, err
	}
	_ = json.Unmarshal(byVerdict, &r.ByVerdict)
	_ = json.Unmarshal(byOutcome, &r.ByOutcome)
	return r, nil
}

// RunFilter selects runs for Runs; zero fields select everything.
type RunFilter struct {
	Spec     string
	Schedule string
	// Limit is how many runs, newest first (0: 20).
	Limit int
}

// Runs lists runs, newest first.
func (s *Store) Runs(ctx context.Context, f RunFilter) ([]RunRow, error) {
	if f.Limit <= 0 {
		f.Limit = 20
	}
	rows, err := s.pool.Query(ctx, `SELECT `+runColumns+` FROM runs
WHERE ($1 = '' OR spec_name = $1) AND ($2 = '' OR schedule = $2)
ORDER BY started DESC, run_id DESC LIMIT $3`, f.Spec, f.Schedule, f.Limit)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	var out []RunRow
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, s.explain(err)
		}
		out = append(out, r)
	}
	return out, s.explain(rows.Err())
}

// LoadRun reads a run back as report.Run (what a run folder holds: manifest and trial
// results), with its row.
func (s *Store) LoadRun(ctx context.Context, runID string) (*report.Run, RunRow, error) {
	r, err := scanRun(s.pool.QueryRow(ctx, `SELECT `+runColumns+` FROM runs WHERE run_id = $1`, runID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, r, fmt.Errorf("%w: %s", ErrNoRun, runID)
	}
	if err != nil {
		return nil, r, s.explain(err)
	}
	rows, err := s.pool.Query(ctx, `SELECT result FROM trials WHERE run_id = $1 ORDER BY trial_id`, runID)
	if err != nil {
		return nil, r, s.explain(err)
	}
	defer rows.Close()
	rep := &report.Run{Dir: r.OutDir, Results: []run.TrialResult{}}
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, r, s.explain(err)
		}
		var t run.TrialResult
		if err := json.Unmarshal(b, &t); err != nil {
			return nil, r, fmt.Errorf("run %s: a trial's result does not decode: %w", runID, err)
		}
		rep.Results = append(rep.Results, t)
	}
	if err := rows.Err(); err != nil {
		return nil, r, s.explain(err)
	}
	m := &rep.Manifest
	m.RunID, m.Plan, m.Conditions, m.Cells, m.Trials = r.RunID, r.Plan, r.Conditions, r.Cells, r.Trials
	m.Spec.Name, m.Spec.Path = r.SpecName, r.SpecPath
	m.Started, m.Ended = r.Started.UTC().Format(time.RFC3339Nano), r.Ended.UTC().Format(time.RFC3339Nano)
	m.AgentCommand, m.Aborted = r.AgentCommand, r.Aborted
	return rep, r, nil
}

// Comparisons returns how a scheduled run compared with the previous run of its
// schedule, per cell and condition (none for an unscheduled or first run).
func (s *Store) Comparisons(ctx context.Context, runID string) ([]report.DiffRow, error) {
	rows, err := s.pool.Query(ctx, `SELECT cell, condition, method, a_k, a_n, b_k, b_n, better, worse, same, p, call
FROM comparisons WHERE run_id = $1 ORDER BY cell, condition`, runID)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	var out []report.DiffRow
	for rows.Next() {
		var d report.DiffRow
		var ak, an, bk, bn int
		if err := rows.Scan(&d.Cell, &d.Condition, &d.Method, &ak, &an, &bk, &bn, &d.Better, &d.Worse, &d.Same, &d.P, &d.Call); err != nil {
			return nil, s.explain(err)
		}
		d.A, d.B = report.NewRate(ak, an), report.NewRate(bk, bn)
		out = append(out, d)
	}
	return out, s.explain(rows.Err())
}

// TrendKey is one cell and condition of a spec.
type TrendKey struct {
	Cell      string
	Condition string
}

// TrendRun is one run's silent-wrong rate per cell and condition.
type TrendRun struct {
	Run   RunRow
	Rates map[TrendKey]report.Rate
}

// Trend returns the last runs of a spec, oldest first, each with its silent-wrong rate
// (silent_wrong over scored trials, see report.Scored) per cell and condition.
func (s *Store) Trend(ctx context.Context, specName string, last int) ([]TrendRun, error) {
	runs, err := s.Runs(ctx, RunFilter{Spec: specName, Limit: last})
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, nil
	}
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.RunID
	}
	var scored []string
	for _, v := range report.Verdicts() {
		if report.Scored(v) {
			scored = append(scored, v)
		}
	}
	rows, err := s.pool.Query(ctx, `SELECT run_id, cell, condition,
    count(*) FILTER (WHERE verdict = $3) AS k,
    count(*) FILTER (WHERE verdict = ANY ($2)) AS n
FROM trials WHERE run_id = ANY ($1)
GROUP BY run_id, cell, condition`, ids, scored, report.SilentWrong)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	byRun := map[string]map[TrendKey]report.Rate{}
	for rows.Next() {
		var id string
		var key TrendKey
		var k, n int
		if err := rows.Scan(&id, &key.Cell, &key.Condition, &k, &n); err != nil {
			return nil, s.explain(err)
		}
		if byRun[id] == nil {
			byRun[id] = map[TrendKey]report.Rate{}
		}
		byRun[id][key] = report.NewRate(k, n)
	}
	if err := rows.Err(); err != nil {
		return nil, s.explain(err)
	}
	out := make([]TrendRun, 0, len(runs))
	for i := len(runs) - 1; i >= 0; i-- {
		out = append(out, TrendRun{Run: runs[i], Rates: byRun[runs[i].RunID]})
	}
	return out, nil
}
