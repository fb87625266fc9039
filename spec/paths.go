package spec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// localPath says what is wrong with a path that must stay inside the folder it is
// relative to, or "" when nothing is.
func localPath(p string) string {
	switch {
	case p == "":
		return "is empty"
	case filepath.IsAbs(p):
		return "is an absolute path"
	case filepath.Clean(p) == ".":
		return "is the folder itself"
	case !filepath.IsLocal(filepath.Clean(p)):
		return "leaves the folder it is relative to"
	}
	return ""
}

// ResolveIn resolves name inside base, following symbolic links, and returns the real
// path. It is an error when name leaves base, lexically or through a link, and when name
// is a folder holding a link that leads out of it (a copy of the folder would carry the
// way out along). A missing name is an error wrapping fs.ErrNotExist.
func ResolveIn(base, name string) (string, error) {
	if msg := localPath(name); msg != "" {
		return "", fmt.Errorf("%q %s", name, msg)
	}
	realBase, err := filepath.EvalSymlinks(base)
	if err != nil {
		return "", fmt.Errorf("resolve the folder %s: %w", base, err)
	}
	real, err := filepath.EvalSymlinks(filepath.Join(realBase, name))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%s does not exist in %s: %w", name, base, fs.ErrNotExist)
		}
		return "", err
	}
	if !inside(realBase, real) {
		return "", fmt.Errorf("%q is a symbolic link to %s, outside %s", name, real, base)
	}
	info, err := os.Stat(real)
	if err != nil || !info.IsDir() {
		return real, err
	}
	err = filepath.WalkDir(real, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink == 0 {
			return err
		}
		rel, _ := filepath.Rel(real, p)
		link, err := os.Readlink(p)
		if err != nil {
			return err
		}
		to := filepath.Join(filepath.Dir(p), link)
		if filepath.IsAbs(link) || !inside(real, to) {
			return fmt.Errorf("%s holds %s, a symbolic link to %s, outside it; copy what it points to instead", name, filepath.Join(name, rel), link)
		}
		return nil
	})
	return real, err
}

// inside says whether p is base or below it (both clean, absolute).
func inside(base, p string) bool {
	rel, err := filepath.Rel(base, p)
	return err == nil && filepath.IsLocal(rel) || rel == "."
}

// CheckFiles resolves every workspace file of s against base (the spec's folder), as
// ResolveIn does, and reports the problems as file:line.
func CheckFiles(s *Spec, file, base string) error {
	var probs []Problem
	for i, f := range s.Workspace.Files {
		if _, err := ResolveIn(base, f); err != nil {
			line := 0
			if i < len(s.Workspace.FileLines) {
				line = s.Workspace.FileLines[i]
			}
			probs = append(probs, Problem{File: file, Line: line, Msg: "workspace.files: " + err.Error()})
		}
	}
	if len(probs) == 0 {
		return nil
	}
	return &Errors{Problems: probs}
}
