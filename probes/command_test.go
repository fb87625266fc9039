package probes

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestCommandCheck(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the checker scripts are sh scripts")
	}
	dir := t.TempDir()
	script := func(name, body string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	tests := []struct {
		name      string
		argv      []string
		env       []string
		timeout   time.Duration
		ok        bool
		detail    string
		noVerdict string // a part of the reason
	}{
		{"ok", []string{script("ok.sh", `echo '{"problems": []}'`)}, nil, time.Minute, true, "no problems", ""},
		{"problems", []string{script("problems.sh", `echo '{"problems": ["priority is normal", {"key": "note"}]}'; exit 1`)}, nil, time.Minute,
			false, `2 problems: priority is normal; {"key":"note"}`, ""},
		{"log lines before the report", []string{script("logs.sh", `echo checking...; echo '{"problems": ["one"]}'`)}, nil, time.Minute,
			false, "1 problem: one", ""},
		{"runs in dir with env", []string{script("env.sh", `test -f env.sh && test "$WANT" = yes && echo '{"problems": []}'`)}, []string{"WANT=yes"}, time.Minute,
			true, "no problems", ""},
		{"relative program in dir", []string{"./ok.sh"}, nil, time.Minute, true, "no problems", ""},
		{"not JSON", []string{script("text.sh", `echo all good`)}, nil, time.Minute, false, "", "not JSON"},
		{"no problems key", []string{script("other.sh", `echo '{"ok": true}'`)}, nil, time.Minute, false, "", `without a "problems" list`},
		{"crash without report", []string{script("crash.sh", `echo boom >&2; exit 3`)}, nil, time.Minute, false, "", "exited with status 3"},
		{"missing program", []string{"chaos-no-such-checker"}, nil, time.Minute, false, "", "not found"},
		{"missing relative program", []string{"./nope.sh"}, nil, time.Minute, false, "", "not found"},
		// A check past its timeout is stopped: had it not been, this one would hold the
		// test to its deadline.
		{"timeout", []string{script("slow.sh", `sleep 3600; echo '{"problems": []}'`)}, nil, 200 * time.Millisecond, false, "", "timed out after 200ms"},
		{"no command", nil, nil, time.Second, false, "", "no command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CommandCheck(context.Background(), dir, tt.argv, tt.env, tt.timeout)
			if tt.noVerdict != "" {
				if !strings.Contains(got.NoVerdict, tt.noVerdict) {
					t.Errorf("NoVerdict = %q, want it to say %q", got.NoVerdict, tt.noVerdict)
				}
				return
			}
			if got.NoVerdict != "" {
				t.Fatalf("NoVerdict = %q", got.NoVerdict)
			}
			if got.OK != tt.ok || got.Detail != tt.detail {
				t.Errorf("got %+v, want OK=%v Detail=%q", got, tt.ok, tt.detail)
			}
		})
	}
}

func TestCommandCheckCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got := CommandCheck(ctx, t.TempDir(), []string{"sh", "-c", `echo '{"problems": []}'`}, nil, time.Second)
	if got.NoVerdict == "" {
		t.Errorf("a cancelled check gave a verdict: %+v", got)
	}
}
