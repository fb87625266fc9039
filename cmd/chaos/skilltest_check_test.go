package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSkillTestRelativeCheck: a relative --check is the file it names in the folder chaos
// is run in, made absolute before anything starts (the check runs in each trial's
// sandbox); one that names no file is refused at once, exit 1, before any trial spends
// money.
func TestSkillTestRelativeCheck(t *testing.T) {
	wd := t.TempDir()
	os.WriteFile(filepath.Join(wd, "check.sh"), []byte("#!/bin/sh\necho '{\"problems\": []}'\n"), 0o755)
	tests := []struct{ check, want, err string }{
		{"./check.sh", filepath.Join(wd, "check.sh"), ""},
		{"./check.sh --strict", filepath.Join(wd, "check.sh") + " --strict", ""},
		{"sh -c 'test -f x'", "sh -c 'test -f x'", ""},
		{"/bin/true", "/bin/true", ""},
		{"./nope.sh", "", "--check ./nope.sh: ./nope.sh is no file (a relative path is read from the folder chaos runs in, " + wd + ")"},
	}
	for _, tt := range tests {
		got, err := resolveCheck(tt.check, wd)
		switch {
		case tt.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.err)):
			t.Errorf("resolveCheck(%q) = %q, %v; want the error %q", tt.check, got, err, tt.err)
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("resolveCheck(%q) = %q, %v; want %q", tt.check, got, err, tt.want)
		}
	}

	// chaos skill test refuses it before it looks for the skill or starts anything.
	var out bytes.Buffer
	root := NewCmdRoot(&IOStreams{Out: &out, ErrOut: &out})
	root.SetArgs([]string{"skill", "test", "no-such-skill", "--allow-real-calls", "--prompt", "do it", "--model", "m", "--check", "./no-such-check.sh", "--project", t.TempDir()})
	err := root.Execute()
	if ExitCode(err) != ExitBadInput || err == nil || !strings.Contains(err.Error(), "--check ./no-such-check.sh: ./no-such-check.sh is no file") {
		t.Errorf("chaos skill test with a missing relative check: exit %d, %v\n%s", ExitCode(err), err, out.String())
	}
}
