package skilltest

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/crashwall/chaos/within"
)

// Folder lays out a skill test's folder, next to the spec it runs:
//
//	DIR/spec.yaml                 the run's spec (workspace.files lists what follows)
//	DIR/clean.record.jsonl        the record of the clean run
//	DIR/.claude/skills/NAME/      a copy of the skill, which every sandbox gets fresh
//	DIR/INPUT                     a copy of each --with file or folder, by its base name
type Folder struct{ Dir string }

func (f Folder) Spec() string   { return filepath.Join(f.Dir, "spec.yaml") }
func (f Folder) Record() string { return filepath.Join(f.Dir, "clean.record.jsonl") }

// SkillPath is where the skill goes, relative to the folder (and to a sandbox).
func SkillPath(name string) string { return filepath.Join(".claude", "skills", name) }

// Fill copies the skill and the inputs into the folder, replacing earlier copies, and
// returns the paths workspace.files lists (relative to the folder). Two inputs with the
// same base name, an input named like the folder's own files, and links are refused.
func (f Folder) Fill(skillName, skillDir string, inputs []string) ([]string, error) {
	if msg := within.Name(skillName); msg != "" {
		return nil, fmt.Errorf("the skill's name %q %s; a skill's name is one folder name", skillName, msg)
	}
	if err := os.MkdirAll(f.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("make the skill test's folder: %w", err)
	}
	files := []string{".claude"}
	dst := filepath.Join(f.Dir, ".claude")
	if err := os.RemoveAll(dst); err != nil {
		return nil, err
	}
	to, err := within.Join(f.Dir, SkillPath(skillName))
	if err != nil {
		return nil, err
	}
	if err := copyTree(skillDir, to); err != nil {
		return nil, fmt.Errorf("copy the skill %s: %w", skillName, err)
	}
	for _, in := range inputs {
		base := filepath.Base(filepath.Clean(in))
		switch {
		case base == "." || base == ".." || base == string(filepath.Separator):
			return nil, fmt.Errorf("--with %s: name a file or a folder", in)
		case base == ".claude" || base == "spec.yaml" || strings.HasPrefix(base, "clean.record"):
			return nil, fmt.Errorf("--with %s: %s is a name the skill test's folder uses itself; rename the input", in, base)
		case containsString(files, base):
			return nil, fmt.Errorf("--with %s: another input is also named %s (inputs keep their base names in the sandbox)", in, base)
		}
		if _, err := os.Lstat(in); err != nil {
			return nil, fmt.Errorf("--with %s: %w", in, err)
		}
		target, err := within.Join(f.Dir, base)
		if err != nil {
			return nil, fmt.Errorf("--with %s: %w", in, err)
		}
		if err := os.RemoveAll(target); err != nil {
			return nil, err
		}
		if err := copyTree(in, target); err != nil {
			return nil, fmt.Errorf("--with %s: %w", in, err)
		}
		files = append(files, base)
	}
	return files, nil
}

// CopyInto copies the folder's workspace files into a sandbox, as a trial's workspace
// does (the clean run's sandbox).
func (f Folder) CopyInto(sandbox string, files []string) error {
	for _, p := range files {
		from, err := within.Join(f.Dir, p)
		if err != nil {
			return err
		}
		to, err := within.Join(sandbox, p)
		if err != nil {
			return err
		}
		if err := copyTree(from, to); err != nil {
			return fmt.Errorf("copy %s into the sandbox: %w", p, err)
		}
	}
	return nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// copyTree copies a file or a folder; a link anywhere in it is refused (it could lead
// out of what the user named).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("%s is a link; copy what it points to instead", p)
		case info.IsDir():
			return os.MkdirAll(to, 0o755)
		case !info.Mode().IsRegular():
			return fmt.Errorf("%s is not a regular file", p)
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		return copyFile(p, to, info.Mode().Perm())
	})
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return errors.Join(err, out.Close())
}
