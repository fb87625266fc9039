// Package reap runs an agent's command so that nothing the agent starts outlives it, nor
// the worker that started it (Linux: a child subreaper). The worker runs it as
// `chaos-relay reap` (a small static binary that starts in a millisecond) or, without a
// relay, `chaos reap`; it imports only the standard library.
package reap

import (
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Supported says whether this system has child subreapers and parent-death signals.
const Supported = true

// ParentGone is the signal the reaper gets when the worker that started it dies.
const ParentGone = syscall.SIGUSR1

// KillAll is the signal the worker sends the reaper when the agent's grace period is
// over: the reaper kills every process the agent started, with SIGKILL, and ends. The
// worker never SIGKILLs the reaper first: that would free whatever the agent left to live
// on under init, the very thing the reaper is there to prevent.
const KillAll = syscall.SIGUSR2

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER of prctl(2).
const prSetChildSubreaper = 36

// Attr starts the reaper as the leader of the agent's process group (the worker signals
// the group, as it would the agent's shell) and has the kernel send it ParentGone when the
// worker dies.
//
// The group is a session of its own (setsid: a new session is a new group, led by the
// reaper, so the group signal is the same): with autogroup scheduling, on by default in
// most kernels, Linux shares the CPU between sessions, not processes, and trials in the
// worker's session would share one session's slice however many ran at once. On two
// cores that something else keeps busy, four trials at once were no faster than one
// (docs/ARCHITECTURE.md, throughput). The agent is not interactive (its stdin is
// /dev/null) and the reaper opens no terminal, so no session here has one.
func Attr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: ParentGone}
}

// Main is a reaper's command line after its name ([--parent PID] [--] COMMAND...), as
// `chaos reap` and `chaos-relay reap` take it; it runs Run and returns the exit code
// (2 for a bad command line).
func Main(args []string, name string) int {
	parent := 0
	if len(args) > 1 && args[0] == "--parent" {
		p, err := strconv.Atoi(args[1])
		if err != nil || p <= 0 {
			os.Stderr.WriteString(name + ": --parent " + strconv.Quote(args[1]) + ": want the worker's process id\n")
			return 2
		}
		parent, args = p, args[2:]
	}
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	return Run(name, parent, args)
}

// Run runs argv (the agent's `sh -c COMMAND`) and sees to it that no process the agent
// starts outlives it, and that none outlives the worker: it is what the reaper does, between
// the worker and the agent.
//
//	worker ──> chaos-relay reap (group leader, child subreaper) ──> sh -c COMMAND ──> ...
//
// As a child subreaper it inherits every process the agent orphans, in its group or not
// (a daemon that called setsid too). When the agent's shell exits it kills all of them,
// as the worker kills what a shell leaves in its group; when the worker dies (the kernel
// sends ParentGone) or the worker's grace period is over (KillAll) it kills them
// at once, whatever they did with signals, sessions or process groups. SIGTERM, SIGINT and
// SIGHUP reach the agent through the group; the reaper passes them on to the processes
// that left the group (a daemon may want to clean up) and waits for the shell.
// It ends as the shell ended: the same exit code, or the same signal. parent is the pid
// of the worker that started it (0: not known); when the reaper's parent is no longer
// that process by the time it runs, the worker died before the kernel could tell it.
func Run(name string, parent int, argv []string) int {
	if len(argv) == 0 {
		os.Stderr.WriteString(name + ": give the command to run after --\n")
		return 2
	}
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		os.Stderr.WriteString(name + ": cannot become a child subreaper: " + errno.Error() + "\n")
	}
	// Caught, not ignored: a caught signal is reset for the agent by exec, an ignored one
	// would stay ignored in it.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, ParentGone, KillAll)

	if parent > 0 && os.Getppid() != parent {
		// The worker died before this process could hear of it: start nothing.
		os.Stderr.WriteString(name + ": the worker that started this agent is gone\n")
		return 128 + int(syscall.SIGKILL)
	}

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// The shell goes if the reaper is killed outright (SIGKILL leaves it no time).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		os.Stderr.WriteString(name + ": " + err.Error() + "\n")
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
			switch s {
			case ParentGone, KillAll:
				// The worker is gone, or done waiting: everything goes, the shell too.
				// killOrphans may reap the shell before cmd.Wait does, so its state is
				// not read here.
				killOrphans()
				return 128 + int(syscall.SIGKILL)
			default:
				outsideGroup(s.(syscall.Signal))
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

// killOrphans kills every process under this one with SIGKILL and reaps its children,
// round after round, until it has none: a killed process's own children come to the
// subreaper and are killed in the next round. It never blocks in wait: the goroutine
// waiting for the shell may reap the shell first, and a blocking wait would then wait
// on a process nobody killed (seen: a setsid'd child that ignored SIGTERM lived on, the
// reaper waiting, until the worker's last resort killed the reaper and set it free).
func killOrphans() {
	self := os.Getpid()
	for {
		// The whole tree, not only children: a grandchild is killed now rather than
		// after its parent's death hands it over.
		for _, pid := range descendantsOf(self) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		reaped := false
		for {
			var st syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &st, syscall.WNOHANG, nil)
			if errors.Is(err, syscall.ECHILD) {
				return
			}
			if err != nil && !errors.Is(err, syscall.EINTR) {
				return
			}
			if pid <= 0 {
				break
			}
			reaped = true
		}
		if !reaped {
			time.Sleep(5 * time.Millisecond) // killed, not yet dead
		}
	}
}

// outsideGroup sends sig to every descendant of this process that is not in its process
// group: those the group signal did not reach.
func outsideGroup(sig syscall.Signal) {
	self := os.Getpid()
	procs := readProcs()
	for _, pid := range procs.descendants(self) {
		if procs[pid].pgrp != self {
			syscall.Kill(pid, sig)
		}
	}
}

type procStat struct{ ppid, pgrp int }

type procTable map[int]procStat

// descendantsOf lists the processes under pid, children first, from each task's list of
// children (/proc/PID/task/TID/children): a few reads for the agent's own tree, where
// reading every process's stat costs a read of each process on the machine. Where the
// kernel has no such lists, it reads them all. A list may miss a process that is being
// born or reparented; killOrphans goes round again while it has children.
func descendantsOf(pid int) []int {
	if _, err := os.Stat("/proc/self/task/" + strconv.Itoa(os.Getpid()) + "/children"); err != nil {
		return readProcs().descendants(pid)
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(p) + "/task")
		for _, t := range tasks {
			b, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/task/" + t.Name() + "/children")
			for _, f := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(f); err == nil {
					out = append(out, c)
					queue = append(queue, c)
				}
			}
		}
	}
	return out
}

// readProcs reads the parent and process group of every process from /proc.
func readProcs() procTable {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := procTable{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses; the last
		// ')' ends it.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 3 {
			continue
		}
		ppid, err1 := strconv.Atoi(f[1])
		pgrp, err2 := strconv.Atoi(f[2])
		if err1 == nil && err2 == nil {
			out[p] = procStat{ppid, pgrp}
		}
	}
	return out
}

// descendants lists the processes under pid, children first.
func (t procTable) descendants(pid int) []int {
	kids := map[int][]int{}
	for p, st := range t {
		kids[st.ppid] = append(kids[st.ppid], p)
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		next := kids[queue[0]]
		queue = append(queue[1:], next...)
		out = append(out, next...)
	}
	return out
}
