//go:build !noserver

package worker

import (
	"database/sql"
	"fmt"

	// The "sqlite" database/sql driver, the one the Temporal SQLite plugin opens.
	_ "modernc.org/sqlite"
)

// unusedVisibilityIndexes are the indexes of Temporal's SQLite visibility table that the
// embedded server drops (dropUnusedVisibilityIndexes): those on search attributes
// nothing of chaos, its web UI's lists or its schedules filters by.
//
// Why: Temporal's SQLite schema indexes the visibility table 58 times, most of them on
// search attributes computed from a JSON column (custom Bool01..Keyword10, TemporalInt01..,
// deployment and pause fields). Every visibility write (a workflow's start, its search
// attributes' upserts, its close: four a trial workflow) is a REPLACE that recomputes and
// rewrites every one of them, and the plugin prepares that statement anew each time
// (modernc.org/sqlite caches no statement), a large share of the server's CPU in a
// profile of a run (BenchmarkTrialCPU). A query on a dropped index still answers, by a
// scan of the table.
//
// Kept: the default list order, the run, workflow id, type, status, task queue,
// parent and root (the UI's lists and `chaos runs`), and the three the schedules
// list filters by (TemporalNamespaceDivision, TemporalScheduledById, TemporalScheduledStartTime).
var unusedVisibilityIndexes = []string{
	"by_history_length", "by_history_size_bytes", "by_execution_duration", "by_state_transition_count",
	"by_batcher_user", "by_temporal_schedule_paused", "by_temporal_pause_info",
	"by_temporal_worker_deployment_version", "by_temporal_workflow_versioning_behavior", "by_temporal_worker_deployment",
	"by_bool_01", "by_bool_02", "by_bool_03",
	"by_datetime_01", "by_datetime_02", "by_datetime_03",
	"by_double_01", "by_double_02", "by_double_03",
	"by_int_01", "by_int_02", "by_int_03",
	"by_keyword_01", "by_keyword_02", "by_keyword_03", "by_keyword_04", "by_keyword_05",
	"by_keyword_06", "by_keyword_07", "by_keyword_08", "by_keyword_09", "by_keyword_10",
	"by_temporal_bool_01", "by_temporal_bool_02", "by_temporal_datetime_01", "by_temporal_datetime_02",
	"by_temporal_double_01", "by_temporal_double_02", "by_temporal_int_01", "by_temporal_int_02",
	"by_temporal_keyword_01", "by_temporal_keyword_02", "by_temporal_keyword_03", "by_temporal_keyword_04",
	"by_temporal_low_cardinality_keyword_01",
}

// dropUnusedVisibilityIndexes drops unusedVisibilityIndexes from the SQLite database
// dbFile, once for a new database and again (a no-op) at every start, so a database an
// older chaos made loses them too. The server is not running yet (the data directory
// is locked by this process).
func dropUnusedVisibilityIndexes(dbFile string) error {
	db, err := sql.Open("sqlite", "file:"+dbFile+"?mode=rw&_pragma=busy_timeout%3d10000")
	if err != nil {
		return fmt.Errorf("open the Temporal database %s: %w", dbFile, err)
	}
	defer db.Close()
	for _, name := range unusedVisibilityIndexes {
		if _, err := db.Exec("DROP INDEX IF EXISTS " + name); err != nil {
			return fmt.Errorf("drop the visibility index %s in %s: %w", name, dbFile, err)
		}
	}
	return nil
}
