package activities

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashwall/chaos/run"
)

// TestSandboxDiffReadsOnlyTheSandbox (issue 28 item 1): changes.diff is read from the
// sandbox alone: a link is its own text (the file it points at outside is never read), a
// folder named .git below the top is not content, new files a .gitignore leaves out are
// left out, a binary file is a binary change, and the agent moving refs/chaos/base
// changes nothing (the base is recorded outside the sandbox).
func TestSandboxDiffReadsOnlyTheSandbox(t *testing.T) {
	a, env := newActivities(t)
	in, _ := gitSpec(t, "FIRST")
	ws := must[run.Workspace](t, env, a.PrepareWorkspace, in)
	if ws.Base == "" {
		t.Fatal("the workspace has no recorded base commit")
	}
	secret := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(secret, []byte("THE-HOST-SECRET\n"), 0o600)
	os.Symlink(secret, filepath.Join(ws.Dir, "peek"))
	os.MkdirAll(filepath.Join(ws.Dir, "vendor", ".git"), 0o755)
	os.WriteFile(filepath.Join(ws.Dir, "vendor", ".git", "config"), []byte("NESTED-GIT\n"), 0o644)
	os.WriteFile(filepath.Join(ws.Dir, ".gitignore"), []byte("*.log\n"), 0o644)
	os.WriteFile(filepath.Join(ws.Dir, "debug.log"), []byte("IGNORED\n"), 0o644)
	os.WriteFile(filepath.Join(ws.Dir, "blob.bin"), []byte("a\x00b"), 0o644)
	os.WriteFile(filepath.Join(ws.Dir, "app.txt"), []byte("changed\n"), 0o644)
	// The agent moves the base ref to a commit of its own making: here, to nothing.
	os.WriteFile(filepath.Join(ws.Dir, ".git", "refs", "chaos", "base"), []byte(strings.Repeat("0", 40)+"\n"), 0o644)

	patch, err := sandboxDiff(context.Background(), ws.Dir, ws.Base)
	if err != nil {
		t.Fatal(err)
	}
	diff := string(patch)
	for _, want := range []string{"+changed", "-v1", "new file mode 120000", "+" + secret, "Binary files /dev/null and b/blob.bin differ", "+*.log"} {
		if !strings.Contains(diff, want) {
			t.Errorf("the diff lacks %q:\n%s", want, diff)
		}
	}
	for _, not := range []string{"THE-HOST-SECRET", "NESTED-GIT", "IGNORED"} {
		if strings.Contains(diff, not) {
			t.Errorf("the diff holds %q:\n%s", not, diff)
		}
	}
}

// TestGitRunsNoProgram (issue 28 item 1): a trial's checkout and its changes.diff are
// made with no git program on the PATH: nothing of git runs, on the spec's repository or
// on the sandbox.
func TestGitRunsNoProgram(t *testing.T) {
	a, env := newActivities(t)
	in, _ := gitSpec(t, "v1")
	t.Setenv("PATH", t.TempDir())
	ws := must[run.Workspace](t, env, a.PrepareWorkspace, in)
	os.WriteFile(filepath.Join(ws.Dir, "app.txt"), []byte("changed\n"), 0o644)
	if _, err := env.ExecuteActivity(a.Teardown, run.TeardownInput{Trial: in, Workspace: ws, Reason: "agent exited"}); err != nil {
		t.Fatal(err)
	}
	diff, err := os.ReadFile(filepath.Join(ws.TrialDir, "changes.diff"))
	if err != nil || !strings.Contains(string(diff), "+changed") {
		t.Errorf("changes.diff: %v\n%s", err, diff)
	}
	if _, err := os.Stat(ws.Dir); !os.IsNotExist(err) {
		t.Errorf("the sandbox is still there: %v", err)
	}
}
