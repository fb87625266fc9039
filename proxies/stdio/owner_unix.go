//go:build unix

package stdio

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
)

// processAlive says whether a process with that pid exists (a zombie counts).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// processStart is the process's start time in clock ticks since boot (Linux's
// /proc/PID/stat, field 22), "" where there is no /proc.
func processStart(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return ""
	}
	f := bytes.Fields(b[i+1:]) // from field 3
	if len(f) < 20 {
		return ""
	}
	return string(f[19])
}
