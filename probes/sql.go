package probes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// SQLCheck runs query on the PostgreSQL database whose DSN is in the environment
// variable dsnEnv and compares the first column of the first row with want
// (JSON-like equality; nil wants NULL). The DSN never appears in a result: errors
// name the variable instead. A missing variable, a database that cannot be reached or
// a query that fails give no verdict; no row is a world that is not right.
func SQLCheck(ctx context.Context, dsnEnv string, query string, want any) Result {
	dsn := os.Getenv(dsnEnv)
	if dsnEnv == "" || dsn == "" {
		return noVerdict("sql check: the environment variable %q that holds the database DSN is not set", dsnEnv)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
	}
	hide := secretsOf(dsn)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return noVerdict("sql check: connecting to the database named by $%s: %s", dsnEnv, redact(err.Error(), hide))
	}
	defer conn.Close(context.WithoutCancel(ctx))

	var got any
	err = conn.QueryRow(ctx, query).Scan(&got)
	if errors.Is(err, pgx.ErrNoRows) {
		return Result{Detail: fmt.Sprintf("query returned no rows, want %s", show(want))}
	}
	if err != nil {
		return noVerdict("sql check: the query failed: %s", redact(err.Error(), hide))
	}
	got = sqlValue(got)
	if !sameValue(got, want) {
		return Result{Detail: fmt.Sprintf("query returned %s, want %s", show(got), show(want))}
	}
	return Result{OK: true, Detail: fmt.Sprintf("query returned %s", show(got))}
}

// sqlValue turns what pgx scans into the JSON data model where JSON would not do it
// well: a uuid is its text, not a list of 16 bytes; bytea is text.
func sqlValue(v any) any {
	switch x := v.(type) {
	case [16]byte:
		return fmt.Sprintf("%x-%x-%x-%x-%x", x[0:4], x[4:6], x[6:8], x[8:10], x[10:16])
	case []byte:
		return string(x)
	}
	return v
}

// secretsOf is what must never be printed of a DSN: the DSN itself and its password.
func secretsOf(dsn string) []string {
	hide := []string{dsn}
	if cfg, err := pgx.ParseConfig(dsn); err == nil && cfg.Password != "" {
		hide = append(hide, cfg.Password)
	}
	return hide
}

func redact(s string, hide []string) string {
	for _, h := range hide {
		if h != "" {
			s = strings.ReplaceAll(s, h, "[redacted]")
		}
	}
	return s
}
