package trial

import (
	"os"
	"syscall"
)

// Windows has no process groups to signal: the agent alone is stopped, and its children
// may outlive it. Trials are meant to run on Linux or macOS workers.
func groupAttr() *syscall.SysProcAttr { return nil }

func killGroup(pid int, sig syscall.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return nil
	}
	p.Kill()
	return nil
}
