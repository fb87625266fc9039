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

// makeTryable is makePollable for a process's stdout: a non-blocking copy of f's
// descriptor that the runtime polls (nil when there is none), and the function that
// closes it.
func makeTryable(f *os.File) (*os.File, func()) {
	r, closeR := makePollable(f)
	p, ok := r.(*os.File)
	if closeR == nil || !ok {
		return nil, nil
	}
	return p, closeR
}

// tryWrite writes p to sc once, without waiting for it to take more: n < len(p) with
// errWouldBlock when the stream is full.
func tryWrite(sc syscall.Conn) func(p []byte) (int, error) {
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return func(p []byte) (int, error) {
		var n int
		var werr error
		err := rc.Write(func(fd uintptr) bool {
			for n < len(p) {
				m, e := syscall.Write(int(fd), p[n:])
				if m > 0 {
					n += m
				}
				if e == syscall.EINTR {
					continue
				}
				if e == syscall.EAGAIN {
					werr = errWouldBlock
				} else if e != nil {
					werr = e
				}
				if e != nil || m <= 0 {
					break
				}
			}
			return true // never wait here
		})
		if err != nil {
			return n, err
		}
		return n, werr
	}
}
