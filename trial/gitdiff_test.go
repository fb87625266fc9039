package trial

import (
	"bytes"
	"compress/zlib"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/crashwall/chaos/run"
)

// TestSandboxDiffReadsOnlyTheSandbox (issue 28 item 1): changes.diff is read from the
// sandbox alone: a link is its own text (the file it points at outside is never read), a
// folder named .git below the top is not content, new files a .gitignore leaves out are
// left out, a binary file is a binary change, and the agent moving refs/chaos/base
// changes nothing (the base is recorded outside the sandbox).
func TestSandboxDiffReadsOnlyTheSandbox(t *testing.T) {
	h, env := newHost(t)
	in, _ := gitSpec(t, "FIRST")
	ws := must[run.Workspace](t, env, h.PrepareWorkspace, in)
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
	h, env := newHost(t)
	in, _ := gitSpec(t, "v1")
	t.Setenv("PATH", t.TempDir())
	ws := must[run.Workspace](t, env, h.PrepareWorkspace, in)
	os.WriteFile(filepath.Join(ws.Dir, "app.txt"), []byte("changed\n"), 0o644)
	if _, err := env.ExecuteActivity(h.Teardown, run.TeardownInput{Trial: in, Workspace: ws, Reason: "agent exited"}); err != nil {
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

// TestSandboxDiffRewrittenBase: an agent that rewrites an object of the base commit in
// its .git (a loose object under the base blob's name, with other content) gets no diff
// built from it: changes.missing says the object does not hash to its name.
func TestSandboxDiffRewrittenBase(t *testing.T) {
	h, env := newHost(t)
	in, _ := gitSpec(t, "FIRST")
	ws := must[run.Workspace](t, env, h.PrepareWorkspace, in)
	unpack(t, filepath.Join(ws.Dir, ".git"))
	blob := plumbing.ComputeHash(plumbing.BlobObject, []byte("v1\n")).String()
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write([]byte("blob 14\x00a lie, planted\n"))
	zw.Close()
	loose := filepath.Join(ws.Dir, ".git", "objects", blob[:2], blob[2:])
	os.Remove(loose)
	if err := os.WriteFile(loose, z.Bytes(), 0o444); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(ws.Dir, "app.txt"), []byte("changed\n"), 0o644)
	if _, err := env.ExecuteActivity(h.Teardown, run.TeardownInput{Trial: in, Workspace: ws, Reason: "agent exited"}); err != nil {
		t.Fatal(err)
	}
	missing, err := os.ReadFile(filepath.Join(ws.TrialDir, "changes.missing"))
	if err != nil || !strings.Contains(string(missing), "does not hash to its name") {
		t.Errorf("changes.missing: %v %s", err, missing)
	}
	if b, err := os.ReadFile(filepath.Join(ws.TrialDir, "changes.diff")); err == nil {
		t.Errorf("a changes.diff was written from the rewritten object:\n%s", b)
	}
	if _, err := os.Stat(ws.Dir); !os.IsNotExist(err) {
		t.Errorf("the sandbox is still there: %v", err)
	}
}

// unpack turns the packed objects of the repository at gitDir into loose ones, as an
// agent may.
func unpack(t *testing.T, gitDir string) {
	t.Helper()
	st := filesystem.NewStorage(osfs.New(gitDir), cache.NewObjectLRUDefault())
	mem := memory.NewStorage()
	iter, err := st.IterEncodedObjects(plumbing.AnyObject)
	if err != nil {
		t.Fatal(err)
	}
	iter.ForEach(func(o plumbing.EncodedObject) error { _, err := mem.SetEncodedObject(o); return err })
	packs, _ := filepath.Glob(filepath.Join(gitDir, "objects", "pack", "*"))
	for _, p := range packs {
		os.Remove(p)
	}
	st = filesystem.NewStorage(osfs.New(gitDir), cache.NewObjectLRUDefault())
	all, _ := mem.IterEncodedObjects(plumbing.AnyObject)
	if err := all.ForEach(func(o plumbing.EncodedObject) error { _, err := st.SetEncodedObject(o); return err }); err != nil {
		t.Fatal(err)
	}
}
