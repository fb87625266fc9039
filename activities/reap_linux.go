package activities

import (
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// reaping says whether RunAgent starts the agent under `chaos reap`.
const reaping = true

// reapParentGone is the signal the reaper gets when the worker that started it dies.
const reapParentGone = syscall.SIGUSR1

// reaperAttr starts the reaper as the leader of the agent's process group (the worker
// signals the group, as it would the agent's shell) and has the kernel send it
// reapParentGone when the worker dies.
func reaperAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: reapParentGone}
}

// Reap runs argv (the agent's `sh -c COMMAND`) and sees to it that no process the agent
// starts outlives it, and that none outlives the worker: it is what `chaos reap` does,
// between the worker and the agent.
//
//	worker ──> chaos reap (group leader, child subreaper) ──> sh -c COMMAND ──> ...
//
// As a child subreaper it inherits every process the agent orphans, in its group or not
// (a daemon that called setsid too). When the agent's shell exits it kills all of them,
// as the worker kills what a shell leaves in its group; when the worker dies (the kernel
// sends reapParentGone) it kills them at once. SIGTERM, SIGINT and SIGHUP reach the
// agent through the group and are not the reaper's to act on: it waits for the shell.
// It ends as the shell ended: the same exit code, or the same signal. parent is the pid
// of the worker that started it (0: not known); when the reaper's parent is no longer
// that process by the time it runs, the worker died before the kernel could tell it.
func Reap(parent int, argv []string) int {
	if len(argv) == 0 {
		os.Stderr.WriteString("chaos reap: give the command to run after --\n")
		return 2
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		os.Stderr.WriteString("chaos reap: cannot become a child subreaper: " + err.Error() + "\n")
	}
	// Caught, not ignored: a caught signal is reset for the agent by exec, an ignored one
	// would stay ignored in it.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, reapParentGone)

	if parent > 0 && os.Getppid() != parent {
		// The worker died before this process could hear of it: start nothing.
		os.Stderr.WriteString("chaos reap: the worker that started this agent is gone\n")
		return 128 + int(syscall.SIGKILL)
	}

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// The shell goes if the reaper is killed outright (SIGKILL leaves it no time).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		os.Stderr.WriteString("chaos reap: " + err.Error() + "\n")
		return 127
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
wait:
	for {
		select {
		case <-done:
			break wait
		case s := <-sigs:
			if s == reapParentGone {
				// The worker is gone: everything goes, the shell too. killOrphans may
				// reap the shell before cmd.Wait does, so its state is not read here.
				killOrphans()
				return 128 + int(syscall.SIGKILL)
			}
		}
	}
	killOrphans()
	st, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if st.Signaled() {
		signal.Reset(st.Signal())
		syscall.Kill(os.Getpid(), st.Signal())
		time.Sleep(time.Second) // the signal ends the process; this is not reached
	}
	return cmd.ProcessState.ExitCode()
}

// killOrphans kills every child of this process with SIGKILL and reaps it, round after
// round, until it has none: a killed process's own children come to the subreaper and
// are killed in the next round.
func killOrphans() {
	self := os.Getpid()
	for {
		for _, pid := range childrenOf(self) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		var st syscall.WaitStatus
		_, err := syscall.Wait4(-1, &st, 0, nil)
		if errors.Is(err, syscall.ECHILD) {
			return
		}
		if err != nil && !errors.Is(err, syscall.EINTR) {
			return
		}
	}
}

// childrenOf lists the processes whose parent is pid, from /proc.
func childrenOf(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses; the last ')'
		// ends it.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, p)
		}
	}
	return out
}
