//go:build !noserver

package worker

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/log"
	pgplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	schematool "go.temporal.io/server/tools/common/schema"
	sqltool "go.temporal.io/server/tools/sql"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/crashwall/chaos/store"
)

const (
	// DefaultPostgresDatabase is the history database when the URL names none; visibility
	// goes to the same name with "_visibility" appended (the names Temporal's own
	// auto-setup uses).
	DefaultPostgresDatabase = "temporal"
	visibilitySuffix        = "_visibility"
	visibilityStoreName     = "visibility"
	// postgresShards is the number of history shards of a Postgres store. Like the SQLite
	// store's one shard it is fixed when the database is set up and can never change.
	postgresShards = 4

	// The embedded schema folders of Temporal's PostgreSQL schema (go.temporal.io/server/schema).
	postgresSchema           = "postgresql/v12/temporal"
	postgresVisibilitySchema = "postgresql/v12/visibility"
)

// postgresDB is one of the two databases of a Postgres store.
type postgresDB struct {
	sql    *config.SQL
	url    string // for store.CreateDatabase and messages
	schema string // the embedded schema folder
}

// postgresStore is the persistence of the embedded server on PostgreSQL, reached through
// Temporal's own pgx-based SQL plugin (postgres12_pgx): history in the database the URL
// names (default "temporal"), visibility in <name>_visibility (or ?visibility_database=).
//
// On every start it does what Temporal's auto-setup does, so a fresh server and an older
// schema both just work:
//
//	create database (if missing) ─> setup-schema -v 0.0 (version tables) ─> update-schema (versioned/*)
//
// for both databases, with Temporal's schema tool and the schema files embedded in the
// server module, then registers cfg.Namespace when missing.
func postgresStore(ctx context.Context, cfg ServerConfig, logger log.Logger) (config.Persistence, error) {
	dbs, err := parsePostgresURL(cfg.DB)
	if err != nil {
		return config.Persistence{}, err
	}
	for _, db := range dbs {
		// store.CreateDatabase connects with pgx first, so a refused port or a wrong
		// password is explained in one sentence before Temporal's tool sees the URL.
		if err := store.CreateDatabase(ctx, db.url); err != nil {
			return config.Persistence{}, fmt.Errorf("the Temporal database: %w", err)
		}
		if err := setupTemporalSchema(db, logger); err != nil {
			return config.Persistence{}, err
		}
	}

	ns, err := sqliteschema.NewNamespaceConfig(clusterName, cfg.Namespace, false, nil)
	if err != nil {
		return config.Persistence{}, fmt.Errorf("namespace %q: %w", cfg.Namespace, err)
	}
	ns.Detail.Config.Retention = durationpb.New(cfg.Retention)
	// CreateNamespaces lives in the SQLite schema package but works on any SQL plugin: it
	// writes the namespace row through the plugin's sqlplugin.DB.
	if err := sqliteschema.CreateNamespaces(dbs[0].sql, ns); err != nil {
		return config.Persistence{}, fmt.Errorf("register namespace %q in %s: %w", cfg.Namespace, store.Where(dbs[0].url), err)
	}

	return config.Persistence{
		DefaultStore:     storeName,
		VisibilityStore:  visibilityStoreName,
		NumHistoryShards: postgresShards,
		DataStores: map[string]config.DataStore{
			storeName:           {SQL: dbs[0].sql},
			visibilityStoreName: {SQL: dbs[1].sql},
		},
	}, nil
}

// setupTemporalSchema brings one database to the schema this server version needs, as
// `temporal-sql-tool setup-schema -v 0.0` and `update-schema --schema-name ...` do.
func setupTemporalSchema(db postgresDB, logger log.Logger) error {
	conn, err := sqltool.NewConnection(db.sql, logger)
	if err != nil {
		return fmt.Errorf("connect to the Temporal database %s: %w", store.Where(db.url), err)
	}
	defer conn.Close()
	// With no schema file, setup only creates the version tables and marks version 0.0 on
	// an empty database; an existing one keeps its version.
	if err := schematool.NewSetupSchemaTask(conn, &schematool.SetupConfig{InitialVersion: "0.0"}, logger).Run(); err != nil {
		return fmt.Errorf("set up Temporal's schema in %s: %w", store.Where(db.url), err)
	}
	// Applies every versioned step after the database's version, up to the newest this
	// server embeds.
	if err := schematool.NewUpdateSchemaTask(conn, &schematool.UpdateConfig{DBName: db.sql.DatabaseName, SchemaName: db.schema}, logger).Run(); err != nil {
		return fmt.Errorf("update Temporal's schema in %s: %w", store.Where(db.url), err)
	}
	return nil
}

// parsePostgresURL reads postgres://USER:PASSWORD@HOST:PORT/DATABASE?sslmode=... into
// the SQL configs of the history and the visibility database. Query parameters other than
// visibility_database are passed to the driver as connection attributes.
func parsePostgresURL(raw string) ([2]postgresDB, error) {
	var dbs [2]postgresDB
	bad := func(why string) error {
		return fmt.Errorf("--db: %s (want postgres://USER:PASSWORD@HOST:PORT/DATABASE)", why)
	}
	raw, err := store.ExpandURL(raw)
	if err != nil {
		return dbs, fmt.Errorf("--db: %w", err)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return dbs, bad("not a URL")
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return dbs, bad(fmt.Sprintf("scheme %q is not postgres", u.Scheme))
	}
	if u.Hostname() == "" {
		return dbs, bad("no host")
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "5432")
	}
	name := strings.TrimPrefix(u.Path, "/")
	if name == "" {
		name = DefaultPostgresDatabase
	}
	q := u.Query()
	visibility := q.Get("visibility_database")
	if visibility == "" {
		visibility = name + visibilitySuffix
	}
	q.Del("visibility_database")
	attrs := map[string]string{}
	for k, v := range q {
		attrs[k] = v[0]
	}
	user := u.User.Username()
	password, ok := u.User.Password()
	if !ok {
		// libpq's PGPASSWORD or password file, as pgx reads them; Temporal's own plugin
		// would put an empty password in its DSN, which overrides both.
		if cfg, err := pgconn.ParseConfig(raw); err == nil && cfg.Password != "" {
			password = cfg.Password
			u.User = url.UserPassword(cfg.User, password)
		}
	}
	for i, db := range []struct{ name, schema string }{{name, postgresSchema}, {visibility, postgresVisibilitySchema}} {
		each := *u
		each.Path = "/" + db.name
		each.RawQuery = q.Encode()
		a := make(map[string]string, len(attrs))
		for k, v := range attrs {
			a[k] = v
		}
		dbs[i] = postgresDB{
			sql: &config.SQL{
				PluginName:        pgplugin.PluginNamePGX,
				DatabaseName:      db.name,
				ConnectAddr:       host,
				ConnectProtocol:   "tcp",
				User:              user,
				Password:          password,
				ConnectAttributes: a,
				// The plugin's defaults are sized for a cluster; this is one process.
				MaxConns:     20,
				MaxIdleConns: 20,
			},
			url:    each.String(),
			schema: db.schema,
		}
	}
	return dbs, nil
}
