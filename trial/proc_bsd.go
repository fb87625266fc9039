//go:build unix && !linux

package trial

import "syscall"

// groupAttr starts the agent as the leader of its own process group, so it and every
// child it starts can be signalled at once. (Only Linux can also tie its life to the
// worker's.)
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
