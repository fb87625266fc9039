//go:build unix

package procgroup

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A program's child ends with the program's group.
func TestKillEndsTheGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child")
	cmd := exec.Command("sh", "-c", "sleep 600 & echo $! > "+pidFile+"; wait")
	Own(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var child int
	for child == 0 {
		b, _ := os.ReadFile(pidFile)
		child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		time.Sleep(10 * time.Millisecond)
	}
	Kill(cmd)
	_ = cmd.Wait()
	// The child is reparented and reaped by init once killed; until then it is a zombie.
	// (Two minutes only guard against a hang: a SIGKILL does not wait on the CPU.)
	for deadline := time.Now().Add(2 * time.Minute); ; {
		if time.Now().After(deadline) {
			t.Fatalf("the program's child %d still runs after its group was killed", child)
		}
		err := syscall.Kill(child, 0)
		if err != nil {
			break
		}
		st, _ := os.ReadFile("/proc/" + strconv.Itoa(child) + "/stat")
		if f := strings.Fields(string(st)); len(f) > 2 && f[2] == "Z" {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
}
