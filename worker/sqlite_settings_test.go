//go:build !noserver

package worker

import (
	"strings"
	"testing"

	"go.temporal.io/server/common/config"
)

// TestSQLiteSettings: SQLiteSettingsEnv sets connections and pragmas, and refuses what it
// does not know with a message naming the fault.
func TestSQLiteSettings(t *testing.T) {
	for _, tt := range []struct {
		env, wantErr string
		conns        int
		attrs        map[string]string
	}{
		{env: "", attrs: map[string]string{"journal_mode": "wal"}},
		{env: "max_conns=4,busy_timeout=10000", conns: 4, attrs: map[string]string{"journal_mode": "wal", "busy_timeout": "10000"}},
		{env: "cache_size=-65536, temp_store=memory", attrs: map[string]string{"journal_mode": "wal", "cache_size": "-65536", "temp_store": "memory"}},
		{env: "max_conns=2,journal_mode=delete", wantErr: "max_conns=2 needs journal_mode=wal"},
		{env: "max_conns=0", wantErr: `max_conns="0" is not a positive number`},
		{env: "locking_mode=exclusive", wantErr: `unknown key "locking_mode"`},
		{env: "synchronous", wantErr: `"synchronous" is not KEY=VALUE`},
	} {
		t.Run(tt.env, func(t *testing.T) {
			t.Setenv(SQLiteSettingsEnv, tt.env)
			c := &config.SQL{ConnectAttributes: map[string]string{"journal_mode": "wal"}}
			err := applySQLiteSettings(c)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.MaxConns != tt.conns || c.MaxIdleConns != tt.conns {
				t.Errorf("conns = %d/%d, want %d", c.MaxConns, c.MaxIdleConns, tt.conns)
			}
			for k, v := range tt.attrs {
				if c.ConnectAttributes[k] != v {
					t.Errorf("%s = %q, want %q", k, c.ConnectAttributes[k], v)
				}
			}
			if len(c.ConnectAttributes) != len(tt.attrs) {
				t.Errorf("attributes %v, want %v", c.ConnectAttributes, tt.attrs)
			}
		})
	}
}
