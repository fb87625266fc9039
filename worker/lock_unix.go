//go:build !noserver && unix

package worker

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockDataDir takes an exclusive lock on dir, released by closing the returned
// file (or by the process ending). flock locks belong to the open file, so a
// second server in the same process is refused too.
func lockDataDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, "server.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock the data directory: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s (stop the other server, use its address with --temporal, or choose another data directory)", ErrDataDirInUse, dir)
		}
		return nil, fmt.Errorf("lock the data directory: %w", err)
	}
	return f, nil
}
