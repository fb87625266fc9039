// Package store keeps the history of runs in PostgreSQL: every run, trial and verdict, the
// comparison of a scheduled run with the one before it, and optionally every recorded call.
// The schema is versioned by numbered migrations (migrations/*.sql, embedded), applied when
// a store is opened; docs/store.md describes the tables.
//
// A run folder stays the primary record of a run: the store is a copy that can be queried
// across runs (chaos runs, show, trend). Writing is idempotent by run and trial id.
package store

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/crashwall/chaos/spec"
)

// EnvURL is the environment variable that names the results database when no flag does.
const EnvURL = "CHAOS_DATABASE_URL"

// ExpandURL fills in the ${VAR}s of a database URL from the environment, so that a
// password need not stand on a command line (docs/store.md). A URL with no password
// takes libpq's PGPASSWORD or password file (PGPASSFILE, ~/.pgpass), which pgx reads.
func ExpandURL(dbURL string) (string, error) {
	out, err := spec.ExpandSecrets(dbURL, nil)
	if err != nil {
		return "", fmt.Errorf("the database URL: %w", err)
	}
	return out, nil
}

// ConnectTimeout bounds one attempt to reach the database.
const ConnectTimeout = 10 * time.Second

// Store is an open results database with its schema up to date.
type Store struct {
	pool *pgxpool.Pool
	// where is the database for messages: host:port/database, never the password.
	where string
}

// Open connects to the results database at dbURL, creates the database when the server
// has no database of that name, and applies the migrations it lacks. Every failure reads
// as one sentence naming the database (never its password): a refused connection, a
// wrong password, a schema newer than this chaos knows (*NewerSchemaError).
func Open(ctx context.Context, dbURL string) (*Store, error) {
	return OpenAt(ctx, dbURL, Latest())
}

// OpenAt is Open with the schema brought to version (not beyond); tests of an upgrade
// start from an older one.
func OpenAt(ctx context.Context, dbURL string, version int) (*Store, error) {
	where := Where(dbURL)
	dbURL, err := ExpandURL(dbURL)
	if err != nil {
		return nil, fmt.Errorf("results database %s: %w", where, err)
	}
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return nil, fmt.Errorf("the results database URL is not valid (want postgres://USER:PASSWORD@HOST:PORT/DATABASE): %s", redactParseError(err, dbURL))
	}
	cfg.ConnConfig.ConnectTimeout = ConnectTimeout
	// A dropped database must not make every write wait for a pool of dead connections.
	cfg.HealthCheckPeriod = 5 * time.Second
	cfg.MaxConns = 8

	pool, err := connect(ctx, cfg)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "3D000" { // invalid_catalog_name: no such database
		if cerr := CreateDatabase(ctx, dbURL); cerr != nil {
			return nil, cerr
		}
		pool, err = connect(ctx, cfg)
	}
	if err != nil {
		return nil, Explain(err, dbURL)
	}
	s := &Store{pool: pool, where: where}
	if err := s.Migrate(ctx, version); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

func connect(ctx context.Context, cfg *pgxpool.Config) (*pgxpool.Pool, error) {
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, ConnectTimeout)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

// Close closes the connections.
func (s *Store) Close() {
	if s != nil && s.pool != nil {
		s.pool.Close()
	}
}

// Where names the database for messages: host:port/database.
func (s *Store) Where() string { return s.where }

// CreateDatabase creates the database dbURL names, through the server's maintenance
// database "postgres", unless it exists.
func CreateDatabase(ctx context.Context, dbURL string) error {
	cfg, err := pgx.ParseConfig(dbURL)
	if err != nil {
		return fmt.Errorf("the database URL is not valid: %s", redactParseError(err, dbURL))
	}
	name := cfg.Database
	if name == "" || name == "postgres" {
		return nil
	}
	cfg.Database = "postgres"
	cfg.ConnectTimeout = ConnectTimeout
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return Explain(err, dbURL)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return Explain(err, dbURL)
	}
	if exists {
		return nil
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		var pgErr *pgconn.PgError
		// Created meanwhile by another opener: 42P04 duplicate_database when its creation
		// was committed first, or 23505 unique_violation on pg_database's name index when
		// both inserted the row at once (PostgreSQL checks the name before it locks).
		if errors.As(err, &pgErr) && (pgErr.Code == "42P04" || pgErr.Code == "23505" && pgErr.ConstraintName == "pg_database_datname_index") {
			return nil
		}
		return fmt.Errorf("create database %s on %s: %w", name, Where(dbURL), Explain(err, dbURL))
	}
	return nil
}

// Where names the database of a URL for messages, without its password: host:port/database.
func Where(dbURL string) string {
	u, err := url.Parse(dbURL)
	if err != nil || u.Host == "" {
		if cfg, err := pgconn.ParseConfig(dbURL); err == nil {
			return fmt.Sprintf("%s:%d/%s", cfg.Host, cfg.Port, cfg.Database)
		}
		return "the database"
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "5432")
	}
	return host + u.Path
}

// Explain turns a failure to reach or use PostgreSQL into one sentence a user can act on,
// naming the database but never its password. Errors it does not recognise keep their
// own text, on one line.
func Explain(err error, dbURL string) error {
	if err == nil {
		return nil
	}
	where := Where(dbURL)
	user := ""
	if u, perr := url.Parse(dbURL); perr == nil && u.User != nil {
		user = u.User.Username()
	}
	var pgErr *pgconn.PgError
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "28P01":
		return &ConnError{Where: where, Msg: fmt.Sprintf("PostgreSQL at %s refused the password of user %q", where, user), Err: err}
	case errors.As(err, &pgErr) && (pgErr.Code == "28000" || strings.HasPrefix(pgErr.Code, "28")):
		return &ConnError{Where: where, Msg: fmt.Sprintf("PostgreSQL at %s does not let user %q in: %s", where, user, pgErr.Message), Err: err}
	case errors.As(err, &pgErr) && pgErr.Code == "3D000":
		return &ConnError{Where: where, Msg: fmt.Sprintf("PostgreSQL at %s has no such database (%s)", where, pgErr.Message), Err: err}
	case errors.As(err, &pgErr) && pgErr.Code == "42501":
		return &ConnError{Where: where, Msg: fmt.Sprintf("user %q may not do this on %s: %s", user, where, pgErr.Message), Err: err}
	case errors.Is(err, syscall.ECONNREFUSED):
		return &ConnError{Where: where, Msg: fmt.Sprintf("cannot reach PostgreSQL at %s: connection refused (is the server running, and on that port?)", where), Err: err}
	case errors.As(err, &dnsErr):
		return &ConnError{Where: where, Msg: fmt.Sprintf("cannot reach PostgreSQL at %s: no host named %q", where, dnsErr.Name), Err: err}
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return &ConnError{Where: where, Msg: fmt.Sprintf("cannot reach PostgreSQL at %s: no answer within %v", where, ConnectTimeout), Err: err}
	case errors.As(err, &pgErr):
		return &ConnError{Where: where, Msg: fmt.Sprintf("PostgreSQL at %s: %s (SQLSTATE %s)", where, pgErr.Message, pgErr.Code), Err: err}
	}
	var ce *ConnError
	if errors.As(err, &ce) {
		return err
	}
	return &ConnError{Where: where, Msg: fmt.Sprintf("PostgreSQL at %s: %s", where, oneLine(err.Error())), Err: err}
}

// ConnError is a failure to reach or use the database, explained in Msg.
type ConnError struct {
	Where string
	Msg   string
	Err   error
}

func (e *ConnError) Error() string { return e.Msg }
func (e *ConnError) Unwrap() error { return e.Err }

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// redactParseError keeps a URL's password out of a parse error.
func redactParseError(err error, dbURL string) string {
	msg := oneLine(err.Error())
	if u, perr := url.Parse(dbURL); perr == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
		}
	}
	return msg
}
