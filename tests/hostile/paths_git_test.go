package hostile_test

// Issue 28 items 1, 3, 7 and 9: the agent's git never runs, no id or name becomes a
// path outside its root, and the smaller ones (the judge's form, duplicate labels, a NUL
// in the task, the work root, secrets in the URLs chaos lists). Each is run through the
// chaos binary with the world's canary folder and process scan checked after.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/tests/testkit"
)

// TestHostileGitPlants: an agent plants every source of commands git reads (fsmonitor,
// textconv, a filter, hooks, an external diff), points its .git at another repository
// (a gitdir: file, a link) or breaks it; chaos run runs nothing of it, changes nothing
// outside, removes every sandbox, and each trial has its diff or says why not.
func TestHostileGitPlants(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	other := filepath.Join(w.tmp, "other-repo")
	testkit.GitRepo(t, other)
	index, err := os.ReadFile(filepath.Join(other, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	pwned := w.pwned()
	path := testkit.GitPlantSpec(t, w.specDir, pwned, other, "")
	out := filepath.Join(w.tmp, "run")
	r := testkit.Run(t, chaosBin, w.env, 10*time.Minute, "run", path, "--only", "clean", "--out", out)
	// The agent never meets the wall: no score (exit 4). What is checked is what git did.
	if r.Code != 4 {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if !strings.Contains(r.Stdout, "trials") {
		t.Errorf("the summary does not read:\n%s", r.Stdout)
	}
	testkit.CheckGitPlants(t, out, pwned, other, index)
	entries, _ := os.ReadDir(workRoot(w.tmp))
	for _, e := range entries {
		if e.Name() != filepath.Base(w.other) {
			t.Errorf("the work root still holds %s: a sandbox was kept", e.Name())
		}
	}
	w.check(t)
}
