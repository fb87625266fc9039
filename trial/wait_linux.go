package trial

import (
	"os"

	"golang.org/x/sys/unix"
)

// awaitExit returns once the process p has ended, without taking an OS thread while it
// waits: p.Wait (and exec.Cmd.Wait) block a thread in waitid for as long as the agent
// runs, a thread per agent in flight (the figures: docs/ARCHITECTURE.md, "No OS thread
// per waiting agent"). Here the process's pidfd is polled by the Go runtime's netpoller,
// which parks only this goroutine; the Wait that follows then finds the process ended and
// returns at once. Where the system has no pidfd (Linux before 5.10) it returns at once,
// and the Wait blocks its thread.
func awaitExit(p *os.Process) {
	fd, err := unix.PidfdOpen(p.Pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), "pidfd") // non-blocking: registered with the netpoller
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	// A pidfd turns readable when its process ends. Read calls the func first, and again
	// after each wake-up, until it says done; a pidfd the netpoller cannot take makes Read
	// return an error, and the Wait blocks its thread.
	_ = rc.Read(func(fd uintptr) bool {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		// WNOWAIT leaves the process to be reaped by the Wait that follows; with
		// WNOHANG, a process still running leaves info zero.
		return err != nil || info.Signo != 0
	})
}
