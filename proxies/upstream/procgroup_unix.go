//go:build unix

package upstream

import (
	"os/exec"
	"syscall"
)

// ownGroup starts a stdio server in a process group of its own, so that everything it
// starts (a shell's children, npx's node) can be ended with it.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup ends what is left of a stdio server's process group once its session is
// closed (the SDK ends only the process it started): a server whose shell started a
// child, refused at its handshake, left that child running before.
func killGroup(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
