// Package store_test checks chaos against a real PostgreSQL server, end to end through the
// binary: the embedded Temporal server on Postgres across a restart, the results database
// (runs, show, trend, a database that goes away mid-run, bad URLs, a newer schema), and
// schedules on the embedded server that find a planted regression and post it to a
// webhook. Each test starts its own throwaway cluster (store/pgtest).
package store_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/crashwall/chaos/tests/chaosbin"
	"github.com/crashwall/chaos/tests/testkit"
)

var (
	chaosBin    string                                                              // built once by TestMain
	exampleSpec = filepath.Join(chaosbin.Root(), "examples", "support-ticket.yaml") // absolute
)

func TestMain(m *testing.M) {
	os.Exit(testkit.Main(m, "tests/store", func(bin string) { chaosBin = bin }))
}

// runTimeout bounds a whole command or run; none is waited out when it is done sooner.
const runTimeout = 15 * time.Minute

// chaos runs the binary to its end (within runTimeout).
func chaos(t testing.TB, env []string, args ...string) testkit.Result {
	t.Helper()
	return testkit.Run(t, chaosBin, env, runTimeout, args...)
}

// mustChaos runs the binary and fails the test unless it exits 0.
func mustChaos(t testing.TB, env []string, args ...string) testkit.Result {
	t.Helper()
	r := chaos(t, env, args...)
	r.MustSucceed(t, "chaos "+strings.Join(args, " "))
	return r
}

// oneClearLine checks a refusal: exit 1, one line on stderr that says want, no stack
// trace, no password.
func oneClearLine(t testing.TB, r testkit.Result, want string, secrets ...string) {
	t.Helper()
	if r.Code != 1 {
		t.Errorf("exit code %d, want 1\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	msg := strings.TrimRight(r.Stderr, "\n")
	if strings.Count(msg, "\n") != 0 || !strings.HasPrefix(msg, "chaos: ") || !strings.Contains(msg, want) {
		t.Errorf("stderr %q: want one line starting \"chaos: \" with %q", r.Stderr, want)
	}
	for _, bad := range append([]string{"goroutine ", "panic:", ".go:"}, secrets...) {
		if strings.Contains(r.Stderr+r.Stdout, bad) {
			t.Errorf("output shows %q:\n%s%s", bad, r.Stdout, r.Stderr)
		}
	}
}

// start starts the binary; the test's cleanup stops it (SIGINT, then SIGKILL).
func start(t testing.TB, env []string, args ...string) *testkit.Proc {
	t.Helper()
	return testkit.Start(t, chaosBin, env, args...)
}

// startServer starts chaos server with args added and returns it once it is ready.
func startServer(t testing.TB, env []string, dataDir string, args ...string) *testkit.Server {
	t.Helper()
	return testkit.StartServer(t, chaosBin, env, dataDir, -1, args...)
}

// query runs one query on the database and scans its single row.
func query(t testing.TB, url, q string, dest ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, q).Scan(dest...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// specWith writes the support-ticket example with its text changed by the replacements
// (old, new pairs; each old must be there) into dir and returns its path.
func specWith(t testing.TB, dir string, replacements ...string) string {
	t.Helper()
	b, err := os.ReadFile(exampleSpec)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for i := 0; i+1 < len(replacements); i += 2 {
		if !strings.Contains(s, replacements[i]) {
			t.Fatalf("the example spec has no %q", replacements[i])
		}
		s = strings.Replace(s, replacements[i], replacements[i+1], 1)
	}
	path := filepath.Join(dir, "support-ticket.yaml")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
