//go:build unix

package shim

import (
	"os/exec"
	"syscall"
)

// ownGroup starts an adapter in a process group of its own, so that whatever it starts
// ends with it.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup ends the adapter's process group.
func killGroup(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
