//go:build !linux

package activities

import (
	"os"
	"syscall"
)

// reaping says whether RunAgent starts the agent under `chaos reap`: only Linux has
// child subreapers and parent-death signals.
const reaping = false

func reaperAttr() *syscall.SysProcAttr { return groupAttr() }

// killAll is never called where there is no reaper.
func killAll(reaper int) {}

// Reap runs nothing where reaping is not supported.
func Reap(parent int, argv []string) int {
	os.Stderr.WriteString("chaos reap: supported on Linux only\n")
	return 2
}
