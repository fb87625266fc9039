package store

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migration is one numbered step of the schema.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// migrations are the embedded steps in order; the file name is VERSION_NAME.sql.
var migrations = loadMigrations()

func loadMigrations() []Migration {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		panic(err)
	}
	var ms []Migration
	for _, e := range entries {
		num, name, ok := strings.Cut(strings.TrimSuffix(e.Name(), ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			panic(fmt.Sprintf("store: migration file %s is not named VERSION_NAME.sql", e.Name()))
		}
		b, err := migrationFiles.ReadFile(path.Join("migrations", e.Name()))
		if err != nil {
			panic(err)
		}
		ms = append(ms, Migration{Version: v, Name: name, SQL: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i, m := range ms {
		if m.Version != i+1 {
			panic(fmt.Sprintf("store: migrations must be numbered 1, 2, 3, ... without gaps (found %d at position %d)", m.Version, i+1))
		}
	}
	return ms
}

// Migrations returns the schema's steps, oldest first.
func Migrations() []Migration { return append([]Migration(nil), migrations...) }

// Latest is the schema version this chaos writes.
func Latest() int { return len(migrations) }

// NewerSchemaError is a database whose schema is newer than this chaos knows: a newer
// chaos migrated it, and this one could misread or damage what that one writes.
type NewerSchemaError struct {
	Where string
	Have  int
	Know  int
}

func (e *NewerSchemaError) Error() string {
	return fmt.Sprintf("the results database %s has schema version %d, newer than this chaos knows (%d): upgrade chaos to use it", e.Where, e.Have, e.Know)
}

// migrationLock is the advisory lock that keeps two processes from migrating at once.
const migrationLock = 0x63_68_61_6f_73 // "chaos"

// Migrate brings the schema to version target (Latest() in normal use; a test asks for an
// older one). Each step runs in its own transaction with its row in schema_migrations, so
// a failed step leaves the schema at the step before. A database at a newer version than
// this chaos knows is refused with *NewerSchemaError.
func (s *Store) Migrate(ctx context.Context, target int) error {
	if target < 0 || target > Latest() {
		return fmt.Errorf("no schema version %d (versions 1 to %d)", target, Latest())
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return s.explain(err)
	}
	defer conn.Release()
	// A session-level lock: released on unlock or when the connection ends.
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", int64(migrationLock)); err != nil {
		return s.explain(err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", int64(migrationLock))

	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
    version    integer PRIMARY KEY,
    name       text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)`); err != nil {
		return fmt.Errorf("create schema_migrations on %s: %w", s.where, s.explain(err))
	}
	var have int
	if err := conn.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&have); err != nil {
		return s.explain(err)
	}
	if have > Latest() {
		return &NewerSchemaError{Where: s.where, Have: have, Know: Latest()}
	}
	for _, m := range migrations[min(have, target):target] {
		tx, err := conn.Begin(ctx)
		if err != nil {
			return s.explain(err)
		}
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			tx.Rollback(ctx)
			return fmt.Errorf("migration %d (%s) on %s: %w", m.Version, m.Name, s.where, s.explain(err))
		}
		if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m.Version, m.Name); err != nil {
			tx.Rollback(ctx)
			return s.explain(err)
		}
		if err := tx.Commit(ctx); err != nil {
			return s.explain(err)
		}
	}
	return nil
}

// Version is the schema version of the database: the last migration applied.
func (s *Store) Version(ctx context.Context) (int, error) {
	var v int
	err := s.pool.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&v)
	return v, s.explain(err)
}

func (s *Store) explain(err error) error {
	if err == nil {
		return nil
	}
	return Explain(err, "postgres://"+s.where)
}
