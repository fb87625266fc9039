//go:build unix

// Package procgroup starts a program the wall runs (a stdio server, a script's adapter) in a
// process group of its own and ends that group, so that whatever the program started ends
// with it.
package procgroup

import (
	"os/exec"
	"syscall"
)

// Own makes cmd start in a process group of its own.
func Own(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// Kill ends cmd's process group (SIGKILL): the program and everything it started that is
// still in its group.
func Kill(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
