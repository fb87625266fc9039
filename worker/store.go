//go:build !noserver

package worker

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"go.temporal.io/server/common/config"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	"google.golang.org/protobuf/types/known/durationpb"
)

const (
	// clusterName names the one cluster of the embedded server; it is stored in
	// the database with the namespace, so it must not change between versions.
	clusterName = "active"
	dbFileName  = "temporal.db"
	storeName   = "default"
)

// sqliteStore is the persistence of the embedded server: one SQLite file in
// cfg.DataDir holding both history and visibility. On first use it creates the
// schema; on every start it registers cfg.Namespace when missing, so the
// frontend knows the namespace from its first request.
//
// A Postgres store belongs next to this one, returning the same config.Persistence.
func sqliteStore(cfg ServerConfig) (config.Persistence, error) {
	dbFile := filepath.Join(cfg.DataDir, dbFileName)
	sqlConf := &config.SQL{
		PluginName:   sqliteplugin.PluginName,
		DatabaseName: dbFile,
		// rwc: read, write, create. WAL with synchronous=normal: a commit is one
		// append to the log, not an fsync of the database (which made every Temporal
		// round trip wait for the disk); a crash of the process loses nothing, a power
		// cut at most the last commits. One connection (the plugin's default).
		ConnectAttributes: map[string]string{"mode": "rwc", "journal_mode": "wal", "synchronous": "normal"},
	}
	if err := applySQLiteSettings(sqlConf); err != nil {
		return config.Persistence{}, err
	}

	if _, err := os.Stat(dbFile); errors.Is(err, fs.ErrNotExist) {
		if err := sqliteschema.SetupSchema(sqlConf); err != nil {
			// Leave no half-made database behind for the next start to trip on.
			_ = os.Remove(dbFile)
			return config.Persistence{}, fmt.Errorf("create the Temporal schema in %s: %w", dbFile, err)
		}
	} else if err != nil {
		return config.Persistence{}, fmt.Errorf("open the Temporal database: %w", err)
	}

	if err := dropUnusedVisibilityIndexes(dbFile); err != nil {
		return config.Persistence{}, err
	}

	ns, err := sqliteschema.NewNamespaceConfig(clusterName, cfg.Namespace, false, nil)
	if err != nil {
		return config.Persistence{}, fmt.Errorf("namespace %q: %w", cfg.Namespace, err)
	}
	ns.Detail.Config.Retention = durationpb.New(cfg.Retention)
	if err := sqliteschema.CreateNamespaces(sqlConf, ns); err != nil {
		return config.Persistence{}, fmt.Errorf("register namespace %q in %s: %w", cfg.Namespace, dbFile, err)
	}

	return config.Persistence{
		DefaultStore:    storeName,
		VisibilityStore: storeName,
		// One shard is plenty for a laptop and keeps SQLite's single writer calm.
		// The count is fixed for the life of the database.
		NumHistoryShards: 1,
		DataStores:       map[string]config.DataStore{storeName: {SQL: sqlConf}},
	}, nil
}
