//go:build unix

package stdio

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// TestRemoveStaleFolders: a socket folder whose owner is gone (its pid ended, or the pid
// is another process's now: another start time) is removed; this process's folders and
// a folder that names no owner yet are kept.
func TestRemoveStaleFolders(t *testing.T) {
	parent := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	folder := func(name, owner string) string {
		dir := filepath.Join(parent, name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if owner != "" {
			if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(owner+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	self := processID(os.Getpid())
	if self == "" {
		t.Fatal("this process is not seen alive")
	}
	mine := folder("wall-mine", self)
	gone := folder("wall-gone", strconv.Itoa(dead.Process.Pid)+" 1")
	reused := folder("wall-reused", strconv.Itoa(os.Getpid())+" 1") // this pid, another start
	unnamed := folder("wall-unnamed", "")
	other := folder("sandbox-1", strconv.Itoa(dead.Process.Pid))

	// One made by ServeStream names this process.
	st, err := ServeStream(nil, parent)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	n, err := RemoveStaleFolders(parent)
	if err != nil {
		t.Fatal(err)
	}
	want := 1 // wall-gone
	if processStart(os.Getpid()) != "" {
		want++ // wall-reused: the start time tells it apart where the system gives one
	}
	if n != want {
		t.Errorf("removed %d folders, want %d", n, want)
	}
	for _, dir := range []string{mine, unnamed, other, filepath.Dir(st.Path)} {
		if _, err := os.Stat(dir); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(dir), err)
		}
	}
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("the folder of a process that ended was kept (%v)", err)
	}
	if _, err := os.Stat(reused); want == 2 && !os.IsNotExist(err) {
		t.Errorf("the folder of a pid used again by another process was kept (%v)", err)
	}
}
