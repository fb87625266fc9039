package trial

import "syscall"

// groupAttr starts the agent as the leader of its own process group, so it and every
// child it starts can be signalled at once, and kills it if the worker thread that
// started it dies (a killed worker leaves no agent behind; its children are reached
// through the group by Teardown of a retried attempt, or die on their own). The group is
// a session of its own, for the CPU share, as reap.Attr says.
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}
