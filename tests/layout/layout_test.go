package layout

import (
	"bytes"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// moduleRoot is the folder of go.mod, two up from this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", root, err)
	}
	return root
}

// goDirs lists the module's folders that hold Go files, as go build sees them: not
// testdata, node_modules, nor folders whose names start with . or _.
func goDirs(t *testing.T, root string) map[string][]string {
	t.Helper()
	dirs := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if path != root {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // another module
				}
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") {
			dirs[filepath.Dir(path)] = append(dirs[filepath.Dir(path)], path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// TestPackageDocs: every package of the module (a test-only package too) has a doc
// comment whose first sentence says what it is, in Go's form: "Package name ..." or, for a
// command, "Command name ...".
func TestPackageDocs(t *testing.T) {
	root := moduleRoot(t)
	dirs := goDirs(t, root)
	var names []string
	for d := range dirs {
		names = append(names, d)
	}
	sort.Strings(names)
	for _, dir := range names {
		rel, _ := filepath.Rel(root, dir)
		var pkg, text string
		for _, path := range dirs[dir] {
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				t.Errorf("%s: %v", path, err)
				continue
			}
			if name := f.Name.Name; strings.HasSuffix(name, "_test") {
				if pkg == "" {
					pkg = strings.TrimSuffix(name, "_test")
				}
			} else {
				pkg = name
			}
			if f.Doc != nil && text == "" && !isBuildIgnored(f) {
				text = f.Doc.Text()
			}
		}
		want := "Package " + pkg + " "
		if pkg == "main" {
			want = "Command " + filepath.Base(dir) + " "
		}
		synopsis := new(doc.Package).Synopsis(text)
		switch {
		case text == "":
			t.Errorf("%s: package %s has no doc comment: say in one sentence what it is (%q...)", rel, pkg, want)
		case !strings.HasPrefix(synopsis, want):
			t.Errorf("%s: the doc comment's first sentence should start %q, it is %q", rel, want, synopsis)
		case len(strings.Fields(synopsis)) < 5:
			t.Errorf("%s: the doc comment's first sentence says too little to know what the package is: %q", rel, synopsis)
		}
	}
	if len(names) < 10 {
		t.Fatalf("found only %d packages under %s: the walk is broken", len(names), root)
	}
}

// isBuildIgnored reports a file kept out of every build (//go:build ignore), whose
// comment is not the package's.
func isBuildIgnored(f *ast.File) bool {
	for _, g := range f.Comments {
		if g.Pos() > f.Package {
			break
		}
		for _, c := range g.List {
			if strings.HasPrefix(c.Text, "//go:build ignore") {
				return true
			}
		}
	}
	return false
}

// TestCmdThin: cmd/ is wiring only, as cli/cli keeps it; a file over 250 lines there is
// work that belongs in a package (issue 14).
func TestCmdThin(t *testing.T) {
	root := moduleRoot(t)
	const most = 250
	seen := 0
	for dir, files := range goDirs(t, root) {
		rel, _ := filepath.Rel(root, dir)
		if rel != "cmd" && !strings.HasPrefix(rel, "cmd"+string(filepath.Separator)) {
			continue
		}
		for _, path := range files {
			seen++
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if n := bytes.Count(b, []byte("\n")); n > most {
				r, _ := filepath.Rel(root, path)
				t.Errorf("%s has %d lines, over %d: move what is not wiring into a package", r, n, most)
			}
		}
	}
	if seen == 0 {
		t.Fatal("no Go file found under cmd/: the walk is broken")
	}
}
