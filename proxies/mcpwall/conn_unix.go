//go:build unix

package mcpwall

import (
	"io"
	"os"
	"syscall"
	"time"
)

// makePollable puts a copy of f's descriptor in non-blocking mode, so that the runtime
// polls it and a read deadline ends a read; the function returned closes the copy. The
// mode belongs to the pipe's open file, which f shares, and stays: putting it back while
// a read may be starting could leave that read blocked for ever, and nothing reads a
// wall's stdin after its session.
func makePollable(f *os.File) (io.Reader, func()) {
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		return f, nil
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return f, nil
	}
	p := os.NewFile(uintptr(fd), f.Name())
	if p.SetReadDeadline(time.Time{}) != nil {
		// Not polled after all: leave f as it was.
		syscall.SetNonblock(fd, false)
		p.Close()
		return f, nil
	}
	return p, func() { p.Close() }
}
