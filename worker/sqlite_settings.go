//go:build !noserver

package worker

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"go.temporal.io/server/common/config"
)

// SQLiteSettingsEnv names the environment variable that overrides the embedded server's
// SQLite settings, for the benchmark that compares them (tests/run
// BenchmarkSQLiteSettings): comma-separated KEY=VALUE pairs, where max_conns is the
// connections the plugin opens (default 1) and every other known key is a pragma
// (journal_mode, synchronous, busy_timeout, cache_size, mmap_size, temp_store,
// wal_autocheckpoint). It is not a user setting: the defaults are the measured best.
const SQLiteSettingsEnv = "CHAOS_SQLITE_SETTINGS"

var sqlitePragmas = []string{"journal_mode", "synchronous", "busy_timeout", "cache_size", "mmap_size", "temp_store", "wal_autocheckpoint"}

// applySQLiteSettings applies SQLiteSettingsEnv, when set, to sqlConf.
func applySQLiteSettings(sqlConf *config.SQL) error {
	v := os.Getenv(SQLiteSettingsEnv)
	if v == "" {
		return nil
	}
	for _, kv := range strings.Split(v, ",") {
		key, value, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || value == "" {
			return fmt.Errorf("%s: %q is not KEY=VALUE", SQLiteSettingsEnv, kv)
		}
		switch {
		case key == "max_conns":
			n, err := strconv.Atoi(value)
			if err != nil || n < 1 {
				return fmt.Errorf("%s: max_conns=%q is not a positive number", SQLiteSettingsEnv, value)
			}
			sqlConf.MaxConns, sqlConf.MaxIdleConns = n, n
		case slices.Contains(sqlitePragmas, key):
			sqlConf.ConnectAttributes[key] = value
		default:
			return fmt.Errorf("%s: unknown key %q (known: max_conns, %s)", SQLiteSettingsEnv, key, strings.Join(sqlitePragmas, ", "))
		}
	}
	if sqlConf.MaxConns > 1 && !strings.EqualFold(sqlConf.ConnectAttributes["journal_mode"], "wal") {
		return fmt.Errorf("%s: max_conns=%d needs journal_mode=wal", SQLiteSettingsEnv, sqlConf.MaxConns)
	}
	return nil
}
