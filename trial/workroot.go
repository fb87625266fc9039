package trial

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// defaultWorkRoot is the work root of this user: $TMPDIR/chaos-work-<uid>. One per user,
// so that no one else's chaos can plant, read or remove a sandbox in it.
func defaultWorkRoot() string {
	return filepath.Join(os.TempDir(), "chaos-work-"+strconv.Itoa(os.Getuid()))
}

func (h *Host) readyWorkRoot() (string, error) { return ReadyWorkRoot(h.workRoot()) }

// ReadyWorkRoot makes the work root root ("": this user's default) 0700 when it is not
// there, and refuses one that is a link, not a folder, or owned by another user (one open
// to others is closed): a sandbox made in it could be read, swapped or planted by them.
// chaos run checks it before it starts anything; every sandbox is made after it.
func ReadyWorkRoot(root string) (string, error) {
	if root == "" {
		root = defaultWorkRoot()
	}
	if err := os.MkdirAll(filepath.Dir(root), 0o755); err != nil {
		return "", fmt.Errorf("create the work root's folder: %w", err)
	}
	if err := os.Mkdir(root, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("create the work root: %w", err)
	}
	fi, err := os.Lstat(root)
	if err != nil {
		return "", fmt.Errorf("the work root %s: %w", root, err)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return "", fmt.Errorf("the work root %s is a symbolic link; remove it (chaos makes its own folder there)", root)
	case !fi.IsDir():
		return "", fmt.Errorf("the work root %s is not a folder; remove it (chaos makes its own folder there)", root)
	}
	if owner, ok := fileOwner(fi); ok && owner != os.Getuid() {
		return "", fmt.Errorf("the work root %s belongs to user %d, not to this user (%d): another user's folder is never used for sandboxes; remove it or set TMPDIR", root, owner, os.Getuid())
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(root, 0o700); err != nil {
			return "", fmt.Errorf("the work root %s is open to other users (%v) and cannot be closed: %w", root, fi.Mode().Perm(), err)
		}
	}
	return root, nil
}
