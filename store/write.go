package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/redact"
	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
)

// RunRow is a run as the runs table holds it.
type RunRow struct {
	RunID        string    `json:"run_id"`
	SpecName     string    `json:"spec_name"`
	SpecPath     string    `json:"spec_path,omitempty"`
	Plan         string    `json:"plan"`
	Conditions   []string  `json:"conditions"`
	Cells        []string  `json:"cells,omitempty"`
	Trials       int       `json:"trials"`
	Finished     int       `json:"finished"`
	Started      time.Time `json:"started"`
	Ended        time.Time `json:"ended"`
	Aborted      string    `json:"aborted,omitempty"`
	AgentCommand string    `json:"agent_command,omitempty"`
	// OutDir is the run folder on Host.
	OutDir    string         `json:"out_dir"`
	Host      string         `json:"host"`
	ByVerdict map[string]int `json:"by_verdict"`
	ByOutcome map[string]int `json:"by_outcome"`
	// Schedule, PreviousRunID and Regressed are set for a scheduled run once it has been
	// compared with the previous run of its schedule.
	Schedule      string `json:"schedule,omitempty"`
	PreviousRunID string `json:"previous_run_id,omitempty"`
	Regressed     bool   `json:"regressed,omitempty"`
}

// Call is one recorded row of a trial, for the calls table.
type Call struct {
	TrialID string
	Row     record.Row
}

// WriteRun writes a run with its trials (and, when given, their recorded calls) in one
// transaction: either all of it is in the database afterwards or none of it. Writing the
// same run again updates its rows (ON CONFLICT DO UPDATE) and replaces its calls, so a
// retried activity never duplicates a row.
func (s *Store) WriteRun(ctx context.Context, r RunRow, trials []run.TrialResult, calls []Call) error {
	return s.inTx(ctx, func(tx pgx.Tx) error { return writeRun(ctx, tx, r, trials, calls) })
}

// writeRun is WriteRun inside a transaction (WriteRun, ImportRun).
func writeRun(ctx context.Context, tx pgx.Tx, r RunRow, trials []run.TrialResult, calls []Call) error {
	byVerdict, _ := json.Marshal(nonNil(r.ByVerdict))
	byOutcome, _ := json.Marshal(nonNil(r.ByOutcome))
	var ended *time.Time
	if !r.Ended.IsZero() {
		ended = &r.Ended
	}
	if _, err := tx.Exec(ctx, `
INSERT INTO runs (run_id, spec_name, spec_path, plan, conditions, cells, trials, finished, started, ended,
                  aborted, agent_command, out_dir, host, by_verdict, by_outcome, written_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, now())
ON CONFLICT (run_id) DO UPDATE SET
    spec_name = EXCLUDED.spec_name, spec_path = EXCLUDED.spec_path, plan = EXCLUDED.plan,
    conditions = EXCLUDED.conditions, cells = EXCLUDED.cells, trials = EXCLUDED.trials,
    finished = EXCLUDED.finished, started = EXCLUDED.started, ended = EXCLUDED.ended,
    aborted = EXCLUDED.aborted, agent_command = EXCLUDED.agent_command, out_dir = EXCLUDED.out_dir,
    host = EXCLUDED.host, by_verdict = EXCLUDED.by_verdict, by_outcome = EXCLUDED.by_outcome,
    written_at = now()`,
		r.RunID, r.SpecName, r.SpecPath, text(r.Plan), nonNilStrings(r.Conditions), nonNilStrings(r.Cells), r.Trials, r.Finished,
		r.Started, ended, text(r.Aborted), text(r.AgentCommand), r.OutDir, r.Host, byVerdict, byOutcome); err != nil {
		return fmt.Errorf("run %s: %w", r.RunID, err)
	}

	b := &pgx.Batch{}
	for _, t := range trials {
		result, err := jsonb(t)
		if err != nil {
			return fmt.Errorf("trial %s: %w", t.ID, err)
		}
		b.Queue(`
INSERT INTO trials (run_id, trial_id, cell, condition, rep, seed, outcome, reason, verdict, verdict_why,
                    world_ok, claim, claim_by, closing, success_possible, calls, fired, duration_ms, dir, result)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)
ON CONFLICT (run_id, trial_id) DO UPDATE SET
    cell = EXCLUDED.cell, condition = EXCLUDED.condition, rep = EXCLUDED.rep, seed = EXCLUDED.seed,
    outcome = EXCLUDED.outcome, reason = EXCLUDED.reason, verdict = EXCLUDED.verdict,
    verdict_why = EXCLUDED.verdict_why, world_ok = EXCLUDED.world_ok, claim = EXCLUDED.claim,
    claim_by = EXCLUDED.claim_by, closing = EXCLUDED.closing, success_possible = EXCLUDED.success_possible,
    calls = EXCLUDED.calls, fired = EXCLUDED.fired, duration_ms = EXCLUDED.duration_ms, dir = EXCLUDED.dir,
    result = EXCLUDED.result`,
			r.RunID, t.ID, t.Cell, t.Condition, t.Rep, t.Seed, t.Outcome, text(t.Reason), t.Verdict, text(t.VerdictWhy),
			t.WorldOK, t.Claim, t.ClaimBy, text(t.Closing), t.SuccessPossible, t.Calls, t.Fired, t.Duration.Milliseconds(), t.Dir, result)
	}
	if len(calls) > 0 {
		// The calls of a trial written again are its calls now: a trial run again
		// after a lost worker may have made fewer.
		seen := map[string]bool{}
		for _, c := range calls {
			if !seen[c.TrialID] {
				seen[c.TrialID] = true
				b.Queue("DELETE FROM calls WHERE run_id = $1 AND trial_id = $2", r.RunID, c.TrialID)
			}
		}
		for _, c := range calls {
			row, err := jsonb(c.Row)
			if err != nil {
				return fmt.Errorf("trial %s call %d: %w", c.TrialID, c.Row.Seq, err)
			}
			var at *time.Time
			if !c.Row.Time.IsZero() {
				at = &c.Row.Time
			}
			b.Queue(`
INSERT INTO calls (run_id, trial_id, seq, type, at, transport, tool, fired, is_error, row)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
ON CONFLICT (run_id, trial_id, seq) DO UPDATE SET
    type = EXCLUDED.type, at = EXCLUDED.at, transport = EXCLUDED.transport, tool = EXCLUDED.tool,
    fired = EXCLUDED.fired, is_error = EXCLUDED.is_error, row = EXCLUDED.row`,
				r.RunID, c.TrialID, c.Row.Seq, c.Row.Type, at, c.Row.Transport, c.Row.Tool,
				c.Row.Hit != nil && c.Row.Hit.Fired, c.Row.IsError, row)
		}
	}
	return tx.SendBatch(ctx, b).Close()
}

// Comparison is a scheduled run compared with the previous run of its schedule.
type Comparison struct {
	RunID         string
	Schedule      string
	PreviousRunID string // "" for the first run of a schedule: nothing to compare with
	Rows          []report.DiffRow
}

// Regressed reports whether a condition got significantly worse.
func (c Comparison) Regressed() bool {
	for _, r := range c.Rows {
		if r.Call == "worse" {
			return true
		}
	}
	return false
}

// WriteComparison marks the run as scheduled, names the run it was compared with, whether
// it regressed, and writes one comparisons row per condition (replacing earlier ones). The
// run's row must exist (WriteRun).
func (s *Store) WriteComparison(ctx context.Context, c Comparison) error {
	return s.inTx(ctx, func(tx pgx.Tx) error { return writeComparison(ctx, tx, c) })
}

// writeComparison is WriteComparison inside a transaction (WriteComparison, ImportRun).
func writeComparison(ctx context.Context, tx pgx.Tx, c Comparison) error {
	tag, err := tx.Exec(ctx, "UPDATE runs SET schedule = $2, previous_run_id = $3, regressed = $4 WHERE run_id = $1",
		c.RunID, c.Schedule, c.PreviousRunID, c.Regressed())
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("run %s is not in the results database (it is written when the run ends)", c.RunID)
	}
	b := &pgx.Batch{}
	b.Queue("DELETE FROM comparisons WHERE run_id = $1", c.RunID)
	for _, r := range c.Rows {
		b.Queue(`
INSERT INTO comparisons (run_id, cell, condition, previous_run_id, method, a_k, a_n, b_k, b_n, better, worse, same, p, call)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
			c.RunID, r.Cell, r.Condition, c.PreviousRunID, r.Method, r.A.K, r.A.N, r.B.K, r.B.N, r.Better, r.Worse, r.Same, r.P, r.Call)
	}
	return tx.SendBatch(ctx, b).Close()
}

func (s *Store) inTx(ctx context.Context, f func(pgx.Tx) error) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return s.explain(err)
	}
	if err := f(tx); err != nil {
		tx.Rollback(context.WithoutCancel(ctx))
		return s.explain(err)
	}
	return s.explain(tx.Commit(ctx))
}

// jsonb encodes v for a jsonb column, which refuses the NUL character that JSON allows
// (an agent's output can hold one): a NUL becomes U+FFFD.
func jsonb(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	b = redact.Known.Bytes(b)
	if !bytes.Contains(b, []byte(`\u0000`)) {
		return b, nil
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == '\\' && i+1 < len(b) {
			if bytes.HasPrefix(b[i:], []byte(`\u0000`)) {
				out = append(out, `\ufffd`...)
				i += len(`\u0000`) - 1
				continue
			}
			out = append(out, b[i], b[i+1]) // an escape: its second byte is never the start of one
			i++
			continue
		}
		out = append(out, b[i])
	}
	return out, nil
}

// text drops the NUL characters a text column refuses, and redacts every secret value
// known.
func text(s string) string { return redact.Known.String(strings.ReplaceAll(s, "\x00", "")) }

func nonNil(m map[string]int) map[string]int {
	if m == nil {
		return map[string]int{}
	}
	return m
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Describe lists what a failed WriteRun left unwritten, for the run's summary: the run,
// its trial ids (the first few, then a count) and the number of calls.
func Describe(runID string, trials []run.TrialResult, calls int) string {
	ids := make([]string, 0, len(trials))
	for _, t := range trials {
		ids = append(ids, t.ID)
	}
	const show = 10
	list := strings.Join(ids, ", ")
	if len(ids) > show {
		list = strings.Join(ids[:show], ", ") + fmt.Sprintf(", and %d more", len(ids)-show)
	}
	s := "run " + runID
	if len(ids) > 0 {
		s += fmt.Sprintf(", %d trials (%s)", len(ids), list)
	}
	if calls > 0 {
		s += fmt.Sprintf(", %d recorded calls", calls)
	}
	return s
}
