//go:build unix

package probes

import (
	"os/exec"
	"syscall"
)

// killGroupOnCancel starts the command in its own process group and kills the whole
// group on cancel, so a checker script's children die with it.
func killGroupOnCancel(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
