package store_test

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashwall/chaos/store/pgtest"
	"github.com/crashwall/chaos/tests/testkit"
)

// TestServerOnPostgres: chaos server --db keeps Temporal's history in PostgreSQL. A run
// made on it is listed by chaos runs (Temporal's visibility) after the server restarts,
// and a wrong password or a refused port stops the server with one line.
func TestServerOnPostgres(t *testing.T) {
	pg := pgtest.Start(t)
	db := pg.URL("temporal")
	env := testkit.Env(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")

	srv := startServer(t, env, data, "--db", db)
	if !strings.Contains(srv.Stdout.String(), fmt.Sprintf("history: PostgreSQL 127.0.0.1:%d/temporal", pg.Port)) {
		t.Errorf("the server does not say where the history is:\n%s", srv.Stdout)
	}
	r := mustChaos(t, env, "run", exampleSpec, "--only", "clean", "--out", filepath.Join(dir, "run"), "--data-dir", data)
	id := runID.FindStringSubmatch(r.Stdout)[1]
	srv.Stop(t)

	// A fresh server (and another data directory: nothing comes from local files).
	data2 := filepath.Join(dir, "data2")
	startServer(t, env, data2, "--db", db)
	r = mustChaos(t, env, "runs", "--data-dir", data2)
	if !strings.Contains(r.Stdout, id) || !lineWith(r.Stdout, id, "completed") {
		t.Errorf("chaos runs after the restart does not list %s as completed:\n%s", id, r.Stdout)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().(*net.TCPAddr).Port
	l.Close()
	for _, tc := range []struct{ name, url, want string }{
		{"wrong password", pg.URLWith(pgtest.User, "hunter2", "temporal"), fmt.Sprintf(`the Temporal database: PostgreSQL at 127.0.0.1:%d/temporal refused the password of user "chaos"`, pg.Port)},
		{"refused port", fmt.Sprintf("postgres://chaos:hunter2@127.0.0.1:%d/temporal", closed), fmt.Sprintf("cannot reach PostgreSQL at 127.0.0.1:%d/temporal: connection refused", closed)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := chaos(t, env, "server", "--data-dir", filepath.Join(t.TempDir(), "d"), "--port", "0", "--ui-port", "-1", "--db", tc.url)
			oneClearLine(t, r, tc.want, "hunter2")
		})
	}
}
