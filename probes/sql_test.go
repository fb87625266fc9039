package probes

import (
	"context"
	"strings"
	"testing"
)

// A test against a real PostgreSQL comes with the store; these cover the cases in
// which the probe cannot run.
func TestSQLCheckWithoutDSN(t *testing.T) {
	t.Setenv("CHAOS_TEST_PROBE_DSN", "")
	got := SQLCheck(context.Background(), "CHAOS_TEST_PROBE_DSN", "select 1", 1)
	if got.NoVerdict == "" || got.OK {
		t.Fatalf("got %+v, want no verdict", got)
	}
	if !strings.Contains(got.NoVerdict, "CHAOS_TEST_PROBE_DSN") {
		t.Errorf("NoVerdict %q does not name the variable", got.NoVerdict)
	}
}

func TestSQLCheckDatabaseDown(t *testing.T) {
	const password = "pw-do-not-print"
	dsn := "postgres://chaos:" + password + "@" + closedPort(t) + "/world?sslmode=disable&connect_timeout=5"
	t.Setenv("CHAOS_TEST_PROBE_DSN", dsn)
	got := SQLCheck(context.Background(), "CHAOS_TEST_PROBE_DSN", "select priority from tickets where id = 42", "urgent")
	if got.NoVerdict == "" || got.OK {
		t.Fatalf("got %+v, want no verdict", got)
	}
	if strings.Contains(got.NoVerdict, password) || strings.Contains(got.NoVerdict, dsn) {
		t.Errorf("NoVerdict %q shows the DSN", got.NoVerdict)
	}
	if !strings.Contains(got.NoVerdict, "$CHAOS_TEST_PROBE_DSN") {
		t.Errorf("NoVerdict %q does not name the variable", got.NoVerdict)
	}
	t.Log(got.NoVerdict)
}

func TestSQLValue(t *testing.T) {
	u := [16]byte{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0}
	if got := sqlValue(u); got != "12345678-9abc-def0-1234-56789abcdef0" {
		t.Errorf("sqlValue(uuid) = %v", got)
	}
	if !sameValue(sqlValue(int32(42)), 42) || !sameValue(sqlValue(int64(42)), 42.0) {
		t.Error("integers from the database do not compare with the spec's numbers")
	}
}
