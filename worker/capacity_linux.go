package worker

import (
	"bytes"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// fileLimit is this process's limit of open files and how many it has open.
func fileLimit() (limit, open int, ok bool) {
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &rl) != nil || rl.Cur == unix.RLIM_INFINITY {
		return 0, 0, false
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0, 0, false
	}
	return int(min(rl.Cur, 1<<30)), len(fds), true
}

// taskLimit is the tightest bound on new processes: this user's (RLIMIT_NPROC, which
// counts threads and binds no root) or the system's (kernel.pid_max and
// kernel.threads-max against every task now), with the tasks in use and what it is.
func taskLimit() (limit, used int, what string, ok bool) {
	total := systemTasks()
	if total < 0 {
		return 0, 0, "", false
	}
	limit, what = unlimited, ""
	for _, f := range []string{"pid_max", "threads-max"} {
		if n := readInt("/proc/sys/kernel/" + f); n > 0 && n < limit {
			limit, what = n, "the system's limit of processes (kernel."+strings.ReplaceAll(f, "-", "_")+")"
		}
	}
	used = total
	var rl unix.Rlimit
	if os.Getuid() != 0 && unix.Getrlimit(unix.RLIMIT_NPROC, &rl) == nil && rl.Cur != unix.RLIM_INFINITY {
		if mine := userTasks(os.Getuid()); int(rl.Cur)-mine < limit-used {
			limit, used, what = int(rl.Cur), mine, "this user's limit of processes (ulimit -u)"
		}
	}
	return limit, used, what, what != ""
}

func readInt(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return -1
	}
	return n
}

// systemTasks is every task (thread) on the system: /proc/loadavg's fourth field is
// running/total.
func systemTasks() int {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) < 4 {
		return -1
	}
	_, total, ok := strings.Cut(f[3], "/")
	if !ok {
		return -1
	}
	n, err := strconv.Atoi(total)
	if err != nil {
		return -1
	}
	return n
}

// userTasks counts the threads of uid's processes.
func userTasks(uid int) int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	want := []byte("\t" + strconv.Itoa(uid) + "\t")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		var uidLine bool
		threads := 1
		for _, line := range bytes.Split(b, []byte{'\n'}) {
			if v, ok := bytes.CutPrefix(line, []byte("Uid:")); ok {
				uidLine = bytes.HasPrefix(append(v, '\t'), want)
			}
			if v, ok := bytes.CutPrefix(line, []byte("Threads:")); ok {
				if t, err := strconv.Atoi(string(bytes.TrimSpace(v))); err == nil {
					threads = t
				}
			}
		}
		if uidLine {
			n += threads
		}
	}
	return n
}
