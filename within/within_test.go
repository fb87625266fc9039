package within_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/within"
)

func TestJoin(t *testing.T) {
	tests := []struct {
		rel  []string
		want string // "" for an error
	}{
		{[]string{"logs", "resume-abc.log"}, "/data/logs/resume-abc.log"},
		{[]string{"trials", "v=a/clean/1"}, "/data/trials/v=a/clean/1"},
		{[]string{"logs", "resume-/../../x.log"}, ""},
		{[]string{"/etc"}, ""},
		{[]string{".."}, ""},
		{[]string{"a/../../b"}, ""},
		{[]string{""}, ""},
		{[]string{"a\x00b"}, ""},
	}
	for _, tt := range tests {
		got, err := within.Join("/data", tt.rel...)
		if tt.want == "" && err == nil {
			t.Errorf("Join(/data, %q) = %s; want an error", tt.rel, got)
		}
		if tt.want != "" && (err != nil || got != filepath.FromSlash(tt.want)) {
			t.Errorf("Join(/data, %q) = %s, %v; want %s", tt.rel, got, err, tt.want)
		}
	}
	for name, ok := range map[string]bool{"my-skill": true, "a b": true, "../x": false, "a/b": false, "..": false, ".": false, "": false, `a\b`: false, "/etc": false} {
		if got := within.Name(name) == ""; got != ok {
			t.Errorf("Name(%q) ok = %v; want %v", name, got, ok)
		}
	}
}

// FuzzWithin: whatever a run id, trial id, skill name, cell or condition holds, a path
// made from it under its root is under that root, or refused. The joins chaos makes are
// these: <data>/logs/resume-<run>.log, <out>/trials/<cell>/<condition>/<rep> from
// spec.TrialID, <project>/chaos-skill-tests/<skill> and .claude/skills/<skill>.
func FuzzWithin(f *testing.F) {
	for _, s := range []string{"abc", "/../../x", "/etc", "..", ".", "a/b", "a/../..", "", "x\x00y", "v=..", `..\..`, "...", "a//b", "./.."} {
		f.Add(s, s, 1)
	}
	f.Fuzz(func(t *testing.T, name, other string, rep int) {
		root := filepath.FromSlash("/root/of/it")
		under := func(what, p string, err error) {
			if err != nil {
				return
			}
			rel, rerr := filepath.Rel(root, p)
			if rerr != nil || rel == "." || !filepath.IsLocal(rel) {
				t.Fatalf("%s: %q escapes %s (%s)", what, p, root, rel)
			}
		}
		p, err := within.Join(root, "logs", "resume-"+name+".log")
		under("run log", p, err)
		p, err = within.Join(root, "trials", spec.TrialID(name, other, rep))
		under("trial folder", p, err)
		p, err = within.Join(root, name)
		under("a name", p, err)
		p, err = within.Join(root, name, other)
		under("two names", p, err)
		if within.Name(name) == "" {
			p = filepath.Join(root, ".claude", "skills", name)
			under("skill folder", p, nil)
			if strings.Count(filepath.ToSlash(p[len(root):]), "/") != 3 {
				t.Fatalf("the name %q is not one folder: %s", name, p)
			}
		}
	})
}
