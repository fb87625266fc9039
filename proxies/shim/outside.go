package shim

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// snapshot is the original project's files (workspace.files, folders walked) by path
// relative to the project: a hash of each file's content, or "dir" for a folder.
type snapshot map[string]string

func takeSnapshot(root string, files []string) (snapshot, error) {
	snap := snapshot{}
	if root == "" {
		return snap, nil
	}
	for _, f := range files {
		base := filepath.Join(root, filepath.Clean(f))
		err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			if d.IsDir() {
				snap[rel] = "dir"
				return nil
			}
			h, err := hashFile(p)
			if err != nil {
				return err
			}
			snap[rel] = h
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	return snap, nil
}

func hashFile(p string) (string, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return fi.Mode().String(), nil
	}
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}

// diff is every change to the original project since the snapshot, in words, sorted.
func (s snapshot) diff(root string, files []string) ([]string, error) {
	now, err := takeSnapshot(root, files)
	if err != nil {
		return nil, err
	}
	var out []string
	for p, h := range now {
		old, ok := s[p]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("outside: %s was created in the original project (%s)", p, filepath.Join(root, p)))
		case old != h:
			out = append(out, fmt.Sprintf("outside: %s was changed in the original project (%s)", p, filepath.Join(root, p)))
		}
	}
	for p := range s {
		if _, ok := now[p]; !ok {
			out = append(out, fmt.Sprintf("outside: %s was removed from the original project (%s)", p, filepath.Join(root, p)))
		}
	}
	sort.Strings(out)
	return out, nil
}
