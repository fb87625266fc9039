//go:build !unix

package mcpwall

import (
	"io"
	"os"
)

// makePollable leaves f as it is where stdin cannot be polled: the guard reads it from a
// goroutine of its own.
func makePollable(f *os.File) (io.Reader, func()) { return f, nil }
