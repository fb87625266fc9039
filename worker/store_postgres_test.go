//go:build !noserver

package worker

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/server/common/log"
	pgschema "go.temporal.io/server/schema/postgresql/v12"
	schematool "go.temporal.io/server/tools/common/schema"
	sqltool "go.temporal.io/server/tools/sql"

	"github.com/crashwall/chaos/store/pgtest"
)

// TestPostgresServer runs a workflow on the embedded server with its history in
// PostgreSQL, stops the server, starts a new one (another data directory, so nothing comes
// from local files) on the same database and finds the workflow, its result and its
// history there. A second database starts at an old Temporal schema and is upgraded.
func TestPostgresServer(t *testing.T) {
	pg := pgtest.Start(t)
	dbURL := pg.URL("temporal") // does not exist yet: the server creates it

	first := startTestServer(t, ServerConfig{DataDir: t.TempDir(), DB: dbURL, UIPort: NoUI})
	c := dialTestClient(t, first.FrontendAddr())
	w := sdkworker.New(c, testTaskQueue, sdkworker.Options{})
	w.RegisterWorkflow(greetWorkflow)
	w.RegisterActivity(greetActivity)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	wf, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "greet-pg", TaskQueue: testTaskQueue}, greetWorkflow, "postgres")
	if err != nil {
		t.Fatal(err)
	}
	var got string
	if err := wf.Get(ctx, &got); err != nil || got != "hello postgres" {
		t.Fatalf("workflow = %q, %v", got, err)
	}
	// A workflow nobody works on stays running across the restart.
	if _, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "waiting-pg", TaskQueue: "nobody-polls"}, greetWorkflow, "later"); err != nil {
		t.Fatal(err)
	}
	eventsBefore := historyLength(t, c, "greet-pg")
	w.Stop()
	stopTestServer(t, first)

	for _, db := range []struct{ name, want string }{{"temporal", pgschema.Version}, {"temporal_visibility", pgschema.VisibilityVersion}} {
		if v := schemaVersion(t, pg.URL(db.name), db.name); v != db.want {
			t.Errorf("database %s has Temporal schema %s, want %s", db.name, v, db.want)
		}
	}

	second := startTestServer(t, ServerConfig{DataDir: t.TempDir(), DB: dbURL, UIPort: NoUI})
	c2 := dialTestClient(t, second.FrontendAddr())
	desc, err := c2.DescribeWorkflowExecution(ctx, "greet-pg", "")
	if err != nil {
		t.Fatalf("describe after restart: %v", err)
	}
	if s := desc.GetWorkflowExecutionInfo().GetStatus(); s != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		t.Fatalf("status after restart = %v", s)
	}
	got = ""
	if err := c2.GetWorkflow(ctx, "greet-pg", "").Get(ctx, &got); err != nil || got != "hello postgres" {
		t.Fatalf("result after restart = %q, %v", got, err)
	}
	if n := historyLength(t, c2, "greet-pg"); n != eventsBefore {
		t.Errorf("history after restart has %d events, before %d", n, eventsBefore)
	}
	desc, err = c2.DescribeWorkflowExecution(ctx, "waiting-pg", "")
	if err != nil || desc.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		t.Fatalf("the running workflow after restart: %v, %v", desc.GetWorkflowExecutionInfo().GetStatus(), err)
	}
	list, err := c2.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: "WorkflowId = 'greet-pg'"})
	if err != nil || len(list.Executions) != 1 {
		t.Fatalf("visibility after restart lists %d executions of greet-pg, %v", len(list.GetExecutions()), err)
	}

	t.Run("an older schema is upgraded", func(t *testing.T) {
		old := pg.CreateDatabase("temporal_old")
		pg.CreateDatabase("temporal_old_visibility")
		dbs, err := parsePostgresURL(old)
		if err != nil {
			t.Fatal(err)
		}
		conn, err := sqltool.NewConnection(dbs[0].sql, log.NewNoopLogger())
		if err != nil {
			t.Fatal(err)
		}
		if err := schematool.NewSetupSchemaTask(conn, &schematool.SetupConfig{InitialVersion: "0.0"}, log.NewNoopLogger()).Run(); err != nil {
			t.Fatal(err)
		}
		if err := schematool.NewUpdateSchemaTask(conn, &schematool.UpdateConfig{SchemaName: postgresSchema, TargetVersion: "1.10"}, log.NewNoopLogger()).Run(); err != nil {
			t.Fatal(err)
		}
		conn.Close()
		if v := schemaVersion(t, old, "temporal_old"); v != "1.10" {
			t.Fatalf("set up at %s, want 1.10", v)
		}
		s := startTestServer(t, ServerConfig{DataDir: t.TempDir(), DB: old, UIPort: NoUI})
		if v := schemaVersion(t, old, "temporal_old"); v != pgschema.Version {
			t.Errorf("after start the schema is %s, want %s", v, pgschema.Version)
		}
		dialTestClient(t, s.FrontendAddr())
	})
}

// TestPostgresServerBadDatabase: a refused port and a wrong password stop the start with
// one sentence that names the database and not the password.
func TestPostgresServerBadDatabase(t *testing.T) {
	pg := pgtest.Start(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().(*net.TCPAddr).Port
	l.Close()
	for _, tc := range []struct{ name, url, want string }{
		{"wrong password", pg.URLWith(pgtest.User, "wrong-pw", "temporal"), fmt.Sprintf(`PostgreSQL at 127.0.0.1:%d/temporal refused the password of user "chaos"`, pg.Port)},
		{"refused port", fmt.Sprintf("postgres://chaos:wrong-pw@127.0.0.1:%d/temporal", closed), fmt.Sprintf("cannot reach PostgreSQL at 127.0.0.1:%d/temporal: connection refused", closed)},
		{"not postgres", "mysql://u:p@host/db", `scheme "mysql" is not postgres`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := StartServer(context.Background(), ServerConfig{DataDir: t.TempDir(), DB: tc.url, UIPort: NoUI})
			if err == nil {
				s.Stop()
				t.Fatal("started")
			}
			if msg := err.Error(); !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") || strings.Contains(msg, "wrong-pw") {
				t.Errorf("error %q: want one line with %q, without the password", msg, tc.want)
			}
		})
	}
}

func TestParsePostgresURL(t *testing.T) {
	for _, tc := range []struct {
		url, host, db, vis, sslmode string
	}{
		{"postgres://u:p@db.example:5433/hist?sslmode=require", "db.example:5433", "hist", "hist_visibility", "require"},
		{"postgresql://u@localhost", "localhost:5432", "temporal", "temporal_visibility", ""},
		{"postgres://u:p@h/t?visibility_database=vis", "h:5432", "t", "vis", ""},
	} {
		dbs, err := parsePostgresURL(tc.url)
		if err != nil {
			t.Fatalf("%s: %v", tc.url, err)
		}
		if dbs[0].sql.ConnectAddr != tc.host || dbs[0].sql.DatabaseName != tc.db || dbs[1].sql.DatabaseName != tc.vis ||
			dbs[0].sql.ConnectAttributes["sslmode"] != tc.sslmode || dbs[0].sql.PluginName != "postgres12_pgx" {
			t.Errorf("%s: %+v / %+v", tc.url, dbs[0].sql, dbs[1].sql)
		}
		if _, ok := dbs[1].sql.ConnectAttributes["visibility_database"]; ok {
			t.Errorf("%s: visibility_database passed to the driver", tc.url)
		}
	}
}

func historyLength(t *testing.T, c client.Client, id string) int {
	t.Helper()
	it := c.GetWorkflowHistory(context.Background(), id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	n := 0
	for it.HasNext() {
		if _, err := it.Next(); err != nil {
			t.Fatalf("history of %s: %v", id, err)
		}
		n++
	}
	return n
}

func schemaVersion(t *testing.T, url, db string) string {
	t.Helper()
	return pgtest.QueryOne[string](t, url, "SELECT curr_version FROM schema_version WHERE version_partition = 0 AND db_name = $1", db)
}

// TestParsePostgresURLPassword: --db's password comes from a ${VAR} in the URL, else
// PGPASSWORD or the password file, so that it need not be on the command line; Temporal's
// plugin gets it either way (its DSN's empty password would override libpq's variables).
func TestParsePostgresURLPassword(t *testing.T) {
	passfile := filepath.Join(t.TempDir(), "pgpass")
	if err := os.WriteFile(passfile, []byte("h:5432:*:u:from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, url string
		env       map[string]string
		want      string // the password Temporal's plugin gets; "" with wantErr
		wantErr   string
	}{
		{"in the URL", "postgres://u:p@h/t", nil, "p", ""},
		{"${VAR}", "postgres://u:${CHAOS_TEST_PW}@h/t", map[string]string{"CHAOS_TEST_PW": "from-var"}, "from-var", ""},
		{"${VAR} not set", "postgres://u:${CHAOS_TEST_PW}@h/t", nil, "", "--db: the database URL: the environment variable CHAOS_TEST_PW is not set"},
		{"PGPASSWORD", "postgres://u@h/t", map[string]string{"PGPASSWORD": "from-env"}, "from-env", ""},
		{"PGPASSFILE", "postgres://u@h/t", map[string]string{"PGPASSFILE": passfile}, "from-file", ""},
		{"the URL's own first", "postgres://u:p@h/t", map[string]string{"PGPASSWORD": "from-env"}, "p", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"CHAOS_TEST_PW", "PGPASSWORD", "PGPASSFILE"} {
				t.Setenv(k, "")
				os.Unsetenv(k)
			}
			t.Setenv("PGPASSFILE", filepath.Join(t.TempDir(), "none"))
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			dbs, err := parsePostgresURL(tc.url)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, db := range dbs {
				if db.sql.Password != tc.want || db.sql.User != "u" {
					t.Errorf("%s: user %q password %q, want u and %q", db.sql.DatabaseName, db.sql.User, db.sql.Password, tc.want)
				}
			}
		})
	}
}
