package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestScheduleCreateRefusesBadInput: what create can check itself is refused with exit 1
// before any server is reached.
func TestScheduleCreateRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"nightly", exampleSpec}, "give exactly one of --every DURATION and --cron EXPR"},
		{[]string{"nightly", exampleSpec, "--every", "1h", "--cron", "0 3 * * *"}, "give exactly one of --every DURATION and --cron EXPR"},
		{[]string{"night ly", exampleSpec, "--every", "1h"}, `schedule name "night ly"`},
		{[]string{"nightly", exampleSpec, "--every", "1h", "--webhook", "ftp://x"}, "--webhook: want an http:// or https:// URL"},
		{[]string{"nightly", exampleSpec, "--every", "1h", "--catchup-window", "1s"}, "Temporal's minimum is 10s"},
		{[]string{"nightly", exampleSpec, "--every", "1h", "--only", "no_such_condition"}, `--only "no_such_condition": no such condition`},
		{[]string{"nightly", "missing.yaml", "--every", "1h"}, "read the spec"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out bytes.Buffer
			root := NewCmdRoot(&IOStreams{Out: &out, ErrOut: &out})
			root.SetArgs(append([]string{"schedule", "create", "--data-dir", t.TempDir()}, tc.args...))
			err := root.Execute()
			if ExitCode(err) != ExitBadInput || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v (exit %d), want exit 1 with %q", err, ExitCode(err), tc.want)
			}
		})
	}
}
