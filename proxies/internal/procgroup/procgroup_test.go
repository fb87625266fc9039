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

	"github.com/crashwall/chaos/tests/fixture"
)

// A program's child ends with the program's group.
func TestKillEndsTheGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child")
	cmd := exec.Command("sh", "-c", "sleep 600 & echo $! > "+pidFile+"; wait")
	Own(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	child := fixture.WaitForPID(t, pidFile)
	Kill(cmd)
	_ = cmd.Wait()
	// The child is reparented and reaped by init once killed; until then it is a zombie.
	// (Two minutes, well short of its sleep, only guard against a hang: a SIGKILL does not
	// wait on the CPU.)
	gone := fixture.Until(t, 2*time.Minute, func() bool {
		if syscall.Kill(child, 0) != nil {
			return true
		}
		st, _ := os.ReadFile("/proc/" + strconv.Itoa(child) + "/stat")
		f := strings.Fields(string(st))
		return len(f) > 2 && f[2] == "Z"
	})
	if !gone {
		t.Fatalf("the program's child %d still runs after its group was killed", child)
	}
}
