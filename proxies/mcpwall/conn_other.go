//go:build !unix

package mcpwall

import (
	"io"
	"os"
	"syscall"
)

// makePollable leaves f as it is where stdin cannot be polled: the guard reads it from a
// goroutine of its own.
func makePollable(f *os.File) (io.Reader, func()) { return f, nil }

// makeTryable has nothing to offer where stdout cannot be polled.
func makeTryable(f *os.File) (*os.File, func()) { return nil, nil }

// tryWrite has nothing to offer where a write cannot be tried without waiting.
func tryWrite(sc syscall.Conn) func(p []byte) (int, error) { return nil }
