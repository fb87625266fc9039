package pgtest

import (
	"strings"
	"testing"
)

// ResultsTables is every row of the results database's tables (runs, trials, calls,
// comparisons) at url as text, in a stable order, without the time of a run's last
// write: two snapshots are equal when no row was added, removed or changed.
func ResultsTables(tb testing.TB, url string) string {
	tb.Helper()
	var b strings.Builder
	for _, q := range []string{
		`SELECT coalesce(string_agg((to_jsonb(r) - 'written_at')::text, E'\n' ORDER BY run_id), '') FROM runs r`,
		`SELECT coalesce(string_agg(to_jsonb(t)::text, E'\n' ORDER BY run_id, trial_id), '') FROM trials t`,
		`SELECT coalesce(string_agg(to_jsonb(c)::text, E'\n' ORDER BY run_id, trial_id, seq), '') FROM calls c`,
		`SELECT coalesce(string_agg(to_jsonb(c)::text, E'\n' ORDER BY run_id, cell, condition), '') FROM comparisons c`,
	} {
		b.WriteString(QueryOne[string](tb, url, q))
		b.WriteString("\n--\n")
	}
	return b.String()
}
