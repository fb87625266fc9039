package spec

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// workspace.files that leave the spec's folder are refused when the spec is loaded, each
// at its line.
func TestWorkspaceFilesStayInside(t *testing.T) {
	base := "name: x\ntask: t\ntools: [{name: t}]\nworkspace:\n  files:\n    - ok.txt\n    - "
	for _, tt := range []struct{ file, want string }{
		{"..", `spec.yaml:7: workspace.files: ".." leaves the folder it is relative to`},
		{"a/../../b", `spec.yaml:7: workspace.files: "a/../../b" leaves the folder it is relative to`},
		{"/etc/passwd", `spec.yaml:7: workspace.files: "/etc/passwd" is an absolute path`},
		{".", `spec.yaml:7: workspace.files: "." is the folder itself`},
		{"a/..", `spec.yaml:7: workspace.files: "a/.." is the folder itself`},
		{"''", `spec.yaml:7: workspace.files: "" is empty`},
	} {
		t.Run(tt.file, func(t *testing.T) {
			_, err := Parse("spec.yaml", []byte(base+tt.file+"\n"))
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "name a file or folder inside the spec's folder") {
				t.Fatalf("error %v; want %s", err, tt.want)
			}
		})
	}
	s, err := Parse("spec.yaml", []byte(base+"sub/data.json\n"))
	if err != nil || strings.Join(s.Workspace.Files, ",") != "ok.txt,sub/data.json" {
		t.Fatalf("inside paths: %v %v", s, err)
	}
}

// ResolveIn follows links and refuses one that leads out, at the top or inside a folder.
func TestResolveIn(t *testing.T) {
	base, outside := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(base, "f.txt"), []byte("x"), 0o644)
	os.MkdirAll(filepath.Join(base, "in", "deep"), 0o755)
	os.MkdirAll(filepath.Join(base, "bad"), 0o755)
	os.MkdirAll(filepath.Join(base, "abs"), 0o755)
	os.Symlink("f.txt", filepath.Join(base, "alias"))
	os.Symlink("../../f.txt", filepath.Join(base, "in", "deep", "up"))
	os.Symlink("deep", filepath.Join(base, "in", "sib"))
	os.Symlink(outside, filepath.Join(base, "escape"))
	os.Symlink("../../"+filepath.Base(outside), filepath.Join(base, "bad", "rel"))
	os.Symlink(filepath.Join(base, "f.txt"), filepath.Join(base, "abs", "link"))
	for _, tt := range []struct{ name, want string }{
		{"f.txt", ""},
		{"alias", ""},
		{"in/sib", "in/sib holds in/sib/up, a symbolic link to ../../f.txt"},
		{"in", "in holds in/deep/up, a symbolic link to ../../f.txt, outside it"},
		{"escape", `"escape" is a symbolic link to`},
		{"bad", "bad holds bad/rel, a symbolic link to"},
		{"abs", "abs holds abs/link, a symbolic link to"},
		{"missing", "missing does not exist"},
		{"../x", "leaves the folder"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ResolveIn(base, tt.name)
			if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("ResolveIn(%s): %v; want %q", tt.name, err, tt.want)
			}
		})
	}
}

// A plan is counted before it is made: axes whose product is astronomical, or flags out
// of range, are refused without building anything.
func TestNewPlanBounds(t *testing.T) {
	s := &Spec{Name: "x", Tasks: []Task{{ID: "t"}}, Replicates: 1}
	for i := range 30 {
		s.Axes = append(s.Axes, Axis{Name: fmt.Sprintf("a%d", i), Values: []string{"x", "y", "z"}})
	}
	for _, tt := range []struct {
		reps, conc int
		want       string
	}{
		{1, 1, "the run would have more than 10000 trials (more than 10000 cells x 1 conditions x 1 replicates)"},
		{-1, 1, "replicates must be at least 1, got -1"},
		{1, -2, "concurrency must be 0 or more, got -2"},
	} {
		if _, err := NewPlan(s, []string{"clean"}, tt.reps, tt.conc); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("NewPlan(reps %d, concurrency %d): %v; want %q", tt.reps, tt.conc, err, tt.want)
		}
	}
	s.Axes = s.Axes[:2]
	if p, err := NewPlan(s, []string{"clean", "f"}, 3, 0); err != nil || len(p.Trials) != 9*2*3 {
		t.Errorf("a small plan: %v", err)
	}
}
