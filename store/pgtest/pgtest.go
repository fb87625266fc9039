// Package pgtest starts a throwaway PostgreSQL server for tests: a fresh cluster made by
// initdb in a temporary folder, listening on a free port of 127.0.0.1, run as a non-root
// user (PostgreSQL refuses to run as root), and removed when the test ends.
//
//	pg := pgtest.Start(t)            // initdb, pg_ctl start, wait until it accepts connections
//	url := pg.URL("results")         // postgres://chaos:<password>@127.0.0.1:<port>/results
//	pg.Stop()                        // a database that goes away
//
// The server binaries are found in $PGBIN, else /usr/lib/postgresql/<version>/bin, else on
// PATH. A machine without them fails the test with a message saying what to install: these
// tests are part of CI and must not be skipped quietly.
package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Credentials of the cluster's superuser.
const (
	User     = "chaos"
	Password = "chaos-test-password"
)

// Cluster is a running throwaway PostgreSQL server.
type Cluster struct {
	Port int
	dir  string // the cluster's folder: data/, the socket, the log
	bin  string
	tb   testing.TB

	mu      sync.Mutex
	stopped bool
}

// Start makes a fresh cluster and starts it; it is stopped and removed at the end of the test.
func Start(tb testing.TB) *Cluster {
	tb.Helper()
	bin, err := binDir()
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	runAs, err := serverUser()
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	// The server's user must reach the folder: under root, TMPDIR may sit in a folder only
	// root can enter, so use /tmp.
	base := ""
	if runAs != nil {
		base = "/tmp"
	}
	dir, err := os.MkdirTemp(base, "chaos-pg-")
	if err != nil {
		tb.Fatal(err)
	}
	c := &Cluster{dir: dir, bin: bin, tb: tb}
	tb.Cleanup(func() {
		c.Stop()
		os.RemoveAll(dir)
	})
	if runAs != nil {
		if err := chownTree(dir, runAs); err != nil {
			tb.Fatalf("pgtest: hand %s to user %s: %v", dir, runAs.Username, err)
		}
	}
	pwFile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwFile, []byte(Password+"\n"), 0o600); err != nil {
		tb.Fatal(err)
	}
	if runAs != nil {
		chownTree(pwFile, runAs)
	}
	if out, err := c.cmd(runAs, "initdb", "-D", c.data(), "-U", User, "--pwfile", pwFile,
		"--auth-host=scram-sha-256", "--auth-local=trust", "-E", "UTF8", "--no-locale", "--no-sync").CombinedOutput(); err != nil {
		tb.Fatalf("pgtest: initdb: %v\n%s", err, out)
	}
	os.Remove(pwFile)

	// A port is free when picked and taken by the server a moment later; on the rare
	// collision the start fails and another port is tried.
	for attempt := 0; ; attempt++ {
		c.Port, err = freePort()
		if err != nil {
			tb.Fatal(err)
		}
		out, err := c.cmd(runAs, "pg_ctl", "-D", c.data(), "-o", c.options(), "-l", c.logPath(), "-w", "-t", "60", "start").CombinedOutput()
		if err == nil {
			break
		}
		if attempt == 2 {
			tb.Fatalf("pgtest: pg_ctl start: %v\n%s\nserver log:\n%s", err, out, c.Log())
		}
	}
	if err := c.waitReady(30 * time.Second); err != nil {
		tb.Fatalf("pgtest: %v\nserver log:\n%s", err, c.Log())
	}
	return c
}

// options are the server's settings. fsync and full page writes are off: they guard
// against the machine losing power, which a test does not do, and cost seconds. Commits
// stay synchronous: a commit is then written to the operating system before it is
// acknowledged, so a server killed at once (Stop) loses nothing it said was committed,
// as a real server does. With synchronous_commit=off it could lose the last ones, and a
// Temporal server on it would find its history torn (an event its mutable state names,
// gone) after a restart.
func (c *Cluster) options() string {
	return fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=200", c.Port, c.dir)
}

// URL is the connection URL of database db on this cluster, as the superuser (the
// database need not exist: see CreateDatabase).
func (c *Cluster) URL(db string) string {
	return c.URLWith(User, Password, db)
}

// URLWith is the connection URL with other credentials (to test a wrong password).
func (c *Cluster) URLWith(user, password, db string) string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword(user, password), Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(c.Port)), Path: "/" + db, RawQuery: "sslmode=disable"}
	return u.String()
}

// CreateDatabase creates database db and returns its URL.
func (c *Cluster) CreateDatabase(db string) string {
	c.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		c.tb.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{db}.Sanitize()); err != nil {
		c.tb.Fatalf("pgtest: create database %s: %v", db, err)
	}
	return c.URL(db)
}

// Stop stops the server at once (as a crash or a lost network would), keeping its files.
// It is safe to call more than once.
func (c *Cluster) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return
	}
	c.stopped = true
	runAs, _ := serverUser()
	if out, err := c.cmd(runAs, "pg_ctl", "-D", c.data(), "-m", "immediate", "-w", "stop").CombinedOutput(); err != nil {
		c.tb.Logf("pgtest: pg_ctl stop: %v\n%s", err, out)
	}
}

// Log is the server's log so far, for a failure message.
func (c *Cluster) Log() string {
	b, _ := os.ReadFile(c.logPath())
	return string(b)
}

func (c *Cluster) data() string    { return filepath.Join(c.dir, "data") }
func (c *Cluster) logPath() string { return filepath.Join(c.dir, "server.log") }

// cmd runs one of the server binaries, as runAs when the test runs as root.
func (c *Cluster) cmd(runAs *user.User, name string, args ...string) *exec.Cmd {
	path := filepath.Join(c.bin, name)
	if runAs != nil {
		return exec.Command("runuser", append([]string{"-u", runAs.Username, "--", path}, args...)...)
	}
	return exec.Command(path, args...)
}

func (c *Cluster) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, c.URL("postgres"))
		if err == nil {
			err = conn.Ping(ctx)
			conn.Close(ctx)
		}
		cancel()
		if err == nil {
			return nil
		}
		last = err
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("the server on port %d did not accept connections within %v: %v", c.Port, timeout, last)
}

// binDir finds the PostgreSQL server binaries.
func binDir() (string, error) {
	if d := os.Getenv("PGBIN"); d != "" {
		return d, nil
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(matches, func(i, j int) bool { return version(matches[i]) > version(matches[j]) })
	if len(matches) > 0 {
		return filepath.Dir(matches[0]), nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		return filepath.Dir(p), nil
	}
	return "", errors.New("no PostgreSQL server binaries (initdb, pg_ctl): install them (apt-get install postgresql) or set PGBIN")
}

func version(initdb string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return v
}

// serverUser is the user the server runs as: nil (this process's user) unless this is
// root, which PostgreSQL refuses; then the "postgres" system user, made if missing.
func serverUser() (*user.User, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err == nil {
		return u, nil
	}
	if out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "postgres").CombinedOutput(); err != nil && !bytes.Contains(out, []byte("already exists")) {
		return nil, fmt.Errorf("running as root, and no postgres user to run the server as (useradd: %v: %s)", err, strings.TrimSpace(string(out)))
	}
	return user.Lookup("postgres")
}

func chownTree(path string, u *user.User) error {
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return filepath.Walk(path, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// QueryOne runs a query that returns one row of one column on the database at url and
// returns that value; any failure fails the test.
func QueryOne[T any](tb testing.TB, url, query string, args ...any) T {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var v T
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		tb.Fatalf("pgtest: connect: %v", err)
		return v
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, query, args...).Scan(&v); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	return v
}
