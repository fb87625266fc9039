package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/store"
	"github.com/crashwall/chaos/store/pgtest"
)

// TestImportRun: a run read back from its folder is written as Aggregate writes it, in one
// transaction, as often as it is imported, with no row added after the first time.
func TestImportRun(t *testing.T) {
	pg := pgtest.Start(t)
	ctx := context.Background()
	dbs := 0
	fresh := func(t *testing.T) string {
		dbs++
		return pg.CreateDatabase(fmt.Sprintf("import_%d", dbs))
	}

	t.Run("the row of a folder is the row Aggregate writes", func(t *testing.T) {
		url := fresh(t)
		s := open(t, url)
		started := time.Date(2026, 11, 29, 10, 15, 0, 123456000, time.UTC)
		written, trials := sampleRun("run-a", "spec-a", started, []string{"silent_wrong", "correct", ""})
		trials[2].Outcome = run.OutcomeFailed
		written.ByVerdict = map[string]int{"silent_wrong": 1, "correct": 1}
		written.ByOutcome = map[string]int{run.OutcomeCompleted: 2, run.OutcomeFailed: 1}
		dir := writeFolder(t, written, trials)
		written.OutDir = dir
		if err := s.WriteRun(ctx, written, trials, nil); err != nil {
			t.Fatal(err)
		}
		before := pgtest.ResultsTables(t, url)

		rep, err := report.LoadRun(dir)
		if err != nil {
			t.Fatal(err)
		}
		row, err := store.RunRowOf(rep, "test")
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.ImportRun(ctx, row, rep.Results, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Existed || got.TrialsBefore != 3 {
			t.Errorf("ImportRun of a written run = %+v, want existed with 3 trials", got)
		}
		if after := pgtest.ResultsTables(t, url); after != before {
			t.Errorf("importing the folder of a written run changed its rows:\nbefore:\n%s\nafter:\n%s", before, after)
		}
	})

	t.Run("twice, with calls and a comparison: no row added", func(t *testing.T) {
		url := fresh(t)
		s := open(t, url)
		r, trials := sampleRun("run-b", "spec-b", time.Now().UTC().Truncate(time.Microsecond), []string{"silent_wrong", "correct"})
		dir := writeFolder(t, r, trials)
		writeRecord(t, filepath.Join(dir, "trials", trials[0].ID, "record.jsonl"), 3)
		writeRecord(t, filepath.Join(dir, "trials", trials[1].ID, "record.jsonl"), 2)
		rep, err := report.LoadRun(dir)
		if err != nil {
			t.Fatal(err)
		}
		row, err := store.RunRowOf(rep, "test")
		if err != nil {
			t.Fatal(err)
		}
		calls := store.RecordedCalls(dir, rep.Results)
		if len(calls) != 5 {
			t.Fatalf("RecordedCalls read %d calls, want 5 (the call and rejected rows)", len(calls))
		}
		cmp := &store.Comparison{Schedule: "nightly", PreviousRunID: "run-0", Rows: []report.DiffRow{
			{Cell: "main", Condition: "phantom_success@save", A: report.NewRate(0, 2), B: report.NewRate(1, 2), P: 1, Method: "McNemar", Call: "same"},
		}}
		var first string
		for i := 0; i < 2; i++ {
			got, err := s.ImportRun(ctx, row, rep.Results, calls, cmp)
			if err != nil {
				t.Fatalf("import %d: %v", i, err)
			}
			if got.Existed != (i > 0) {
				t.Errorf("import %d: existed = %v", i, got.Existed)
			}
			if i == 0 {
				first = pgtest.ResultsTables(t, url)
			} else if again := pgtest.ResultsTables(t, url); again != first {
				t.Errorf("the second import changed rows:\nfirst:\n%s\nsecond:\n%s", first, again)
			}
		}
		for table, want := range map[string]int{"runs": 1, "trials": 2, "calls": 5, "comparisons": 1} {
			if n := count(t, url, "SELECT count(*) FROM "+table); n != want {
				t.Errorf("%d rows in %s, want %d", n, table, want)
			}
		}
		_, stored, err := s.LoadRun(ctx, "run-b")
		if err != nil {
			t.Fatal(err)
		}
		if stored.Schedule != "nightly" || stored.PreviousRunID != "run-0" || stored.ByVerdict["silent_wrong"] != 1 || stored.Finished != 2 {
			t.Errorf("run row: %+v", stored)
		}
	})

	t.Run("a failure leaves nothing of the run", func(t *testing.T) {
		url := fresh(t)
		s := open(t, url)
		r, trials := sampleRun("run-c", "spec-c", time.Now().UTC(), []string{"correct"})
		// A call of a trial the run does not have breaks the calls' foreign key, after the
		// run and its trial were written in the same transaction.
		calls := []store.Call{{TrialID: "no/such/trial", Row: record.Row{Type: record.TypeCall, Seq: 1, Tool: "save"}}}
		if _, err := s.ImportRun(ctx, r, trials, calls, nil); err == nil {
			t.Fatal("ImportRun with a call of no trial succeeded")
		}
		for _, table := range []string{"runs", "trials", "calls"} {
			if n := count(t, url, "SELECT count(*) FROM "+table); n != 0 {
				t.Errorf("%d rows in %s after a failed import, want 0", n, table)
			}
		}
	})

	t.Run("a folder that cannot be a run's", func(t *testing.T) {
		good, trials := sampleRun("run-d", "spec-d", time.Now().UTC(), []string{"correct", "correct"})
		for _, tc := range []struct {
			name   string
			change func(*report.Run)
			want   string
		}{
			{"no run id", func(r *report.Run) { r.Manifest.RunID = "" }, "manifest.json has no run_id"},
			{"no start", func(r *report.Run) { r.Manifest.Started = "" }, "manifest.json has no valid start time"},
			{"a trial without id", func(r *report.Run) { r.Results[1].ID = "" }, "verdicts.json: trial 2 has no id"},
			{"a trial twice", func(r *report.Run) { r.Results[1].ID = r.Results[0].ID }, "verdicts.json lists trial main/phantom_success@save/1 twice"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				rep, err := report.LoadRun(writeFolder(t, good, trials))
				if err != nil {
					t.Fatal(err)
				}
				tc.change(rep)
				if _, err := store.RunRowOf(rep, "test"); err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("RunRowOf = %v, want %q", err, tc.want)
				}
			})
		}
	})
}

// writeFolder writes a run folder's manifest.json and verdicts.json as Aggregate does.
func writeFolder(t *testing.T, r store.RunRow, trials []run.TrialResult) string {
	t.Helper()
	dir := t.TempDir()
	m := map[string]any{
		"run_id": r.RunID, "spec": map[string]string{"name": r.SpecName, "path": r.SpecPath}, "plan": r.Plan,
		"conditions": r.Conditions, "cells": r.Cells, "trials": r.Trials, "finished": len(trials),
		"started": r.Started, "ended": r.Ended, "agent_command": r.AgentCommand, "aborted": r.Aborted,
	}
	for name, v := range map[string]any{"manifest.json": m, "verdicts.json": trials} {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// writeRecord writes a trial's record: a session start, n-1 calls, one rejected call and
// the session end.
func writeRecord(t *testing.T, path string, n int) {
	t.Helper()
	w, err := record.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	rows := []record.Row{{Type: record.TypeSessionStart}}
	for i := 1; i < n; i++ {
		rows = append(rows, record.Row{Type: record.TypeCall, Tool: "save"})
	}
	rows = append(rows, record.Row{Type: record.TypeRejected, Tool: "nope"})
	for _, r := range rows {
		if _, err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(record.Row{}); err != nil {
		t.Fatal(err)
	}
}
