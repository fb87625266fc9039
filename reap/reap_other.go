//go:build !linux

package reap

import (
	"os"
	"syscall"
)

// Supported says whether this system has child subreapers and parent-death signals:
// Linux only.
const Supported = false

// KillAll is never sent where there is no reaper.
const KillAll = syscall.Signal(0)

// Attr is never used where there is no reaper.
func Attr() *syscall.SysProcAttr { return nil }

// Main runs nothing where reaping is not supported.
func Main(args []string, name string) int { return Run(name, 0, args) }

// Run runs nothing where reaping is not supported.
func Run(name string, parent int, argv []string) int {
	os.Stderr.WriteString(name + ": supported on Linux only\n")
	return 2
}
