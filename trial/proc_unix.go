//go:build unix

package trial

import (
	"errors"
	"syscall"
)

// killGroup sends sig to every process of the group led by pgid. A group that is
// already gone is not an error.
func killGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 0 {
		return nil
	}
	if err := syscall.Kill(-pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}
