package reap

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestAttrStartsASessionOfItsOwn: the reaper leads the agent's process group (the worker
// signals it) in a session of its own, so that the kernel's autogroup scheduling gives
// each trial a share of the CPU rather than one share to every trial of the worker.
func TestAttrStartsASessionOfItsOwn(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = Attr()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	pid := cmd.Process.Pid
	pgrp, session := groupAndSession(t, pid)
	if pgrp != pid {
		t.Errorf("process group %d, want the reaper's own (%d): the worker signals the group", pgrp, pid)
	}
	if session != pid {
		t.Errorf("session %d, want one the reaper leads (%d)", session, pid)
	}
	if _, mine := groupAndSession(t, os.Getpid()); session == mine {
		t.Errorf("the reaper is in the worker's session (%d)", mine)
	}
}

// groupAndSession reads a process's group and session from /proc/PID/stat.
func groupAndSession(t *testing.T, pid int) (int, int) {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // state ppid pgrp session ...
	pgrp, err1 := strconv.Atoi(f[2])
	session, err2 := strconv.Atoi(f[3])
	if err1 != nil || err2 != nil {
		t.Fatalf("/proc/%d/stat: %q", pid, s)
	}
	return pgrp, session
}
