package store_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashwall/chaos/store"
	"github.com/crashwall/chaos/store/pgtest"
)

// TestPasswordOffTheCommandLine: the results database's password can come from a ${VAR}
// in the URL, from PGPASSWORD or from a password file, so no command line carries it; a
// wrong one from there is refused (the password is really used), and a ${VAR} that is not
// set is an error naming it.
func TestPasswordOffTheCommandLine(t *testing.T) {
	pg := pgtest.Start(t)
	pg.CreateDatabase("pw")
	full := pg.URL("pw")
	noPassword := pg.URLWith(pgtest.User, "", "pw")
	noPassword = strings.Replace(noPassword, pgtest.User+":@", pgtest.User+"@", 1)
	if strings.Contains(noPassword, ":@") || strings.Contains(noPassword, pgtest.Password) {
		t.Fatalf("URL without a password: %s", noPassword)
	}
	withVar := strings.Replace(full, pgtest.Password, "${CHAOS_TEST_PG_PASSWORD}", 1)
	passfile := func(t *testing.T, password string) string {
		path := filepath.Join(t.TempDir(), "pgpass")
		if err := os.WriteFile(path, []byte("*:*:*:"+pgtest.User+":"+password+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cases := []struct {
		name    string
		url     string
		env     map[string]string
		passExt string // PGPASSFILE's password, when set
		wantErr string
	}{
		{"${VAR} in the URL", withVar, map[string]string{"CHAOS_TEST_PG_PASSWORD": pgtest.Password}, "", ""},
		{"${VAR} not set", withVar, nil, "", "the environment variable CHAOS_TEST_PG_PASSWORD is not set"},
		{"${VAR} wrong", withVar, map[string]string{"CHAOS_TEST_PG_PASSWORD": "wrong"}, "", "password"},
		{"PGPASSWORD", noPassword, map[string]string{"PGPASSWORD": pgtest.Password}, "", ""},
		{"PGPASSWORD wrong", noPassword, map[string]string{"PGPASSWORD": "wrong"}, "", "password"},
		{"PGPASSFILE", noPassword, nil, pgtest.Password, ""},
		{"PGPASSFILE wrong", noPassword, nil, "wrong", "password"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, k := range []string{"CHAOS_TEST_PG_PASSWORD", "PGPASSWORD", "PGPASSFILE"} {
				t.Setenv(k, "")
				os.Unsetenv(k)
			}
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			if c.passExt != "" {
				t.Setenv("PGPASSFILE", passfile(t, c.passExt))
			} else {
				t.Setenv("PGPASSFILE", filepath.Join(t.TempDir(), "none")) // not the user's ~/.pgpass
			}
			s, err := store.Open(context.Background(), c.url)
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				s.Close()
				return
			}
			if err == nil {
				s.Close()
				t.Fatalf("Open succeeded, want an error containing %q", c.wantErr)
			}
			if !strings.Contains(err.Error(), c.wantErr) || strings.Contains(err.Error(), pgtest.Password) {
				t.Errorf("error %q, want it to contain %q and not the password", err, c.wantErr)
			}
		})
	}
}
