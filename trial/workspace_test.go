package trial

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashwall/chaos/run"
)

// gitRepo makes a repository in dir with two commits on main (app.txt "v1", then "v2"),
// a tag v1 on the first and a branch feature off it; it returns the first commit's hash.
func gitRepo(t *testing.T, dir string) string {
	t.Helper()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	git("init", "-q", "-b", "main")
	write("app.txt", "v1\n")
	write("keep.txt", "unchanged\n")
	git("add", ".")
	git("commit", "-q", "-m", "first")
	first := git("rev-parse", "HEAD")
	git("tag", "v1")
	git("branch", "feature")
	write("app.txt", "v2\n")
	git("commit", "-q", "-am", "second")
	git("checkout", "-q", "feature")
	write("app.txt", "feature\n")
	git("commit", "-q", "-am", "on feature")
	git("checkout", "-q", "main")
	return first
}

// gitSpec writes a spec next to a repo and two files, whose workspace is the repo at ref.
func gitSpec(t *testing.T, ref string) (run.TrialInput, string) {
	t.Helper()
	base := t.TempDir()
	first := gitRepo(t, filepath.Join(base, "repo"))
	if ref == "FIRST" {
		ref = first
	}
	if err := os.MkdirAll(filepath.Join(base, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(base, "notes.txt"), []byte("notes\n"), 0o644)
	os.WriteFile(filepath.Join(base, "data", "extra.json"), []byte(`{"a":1}`), 0o600)
	workspace := "workspace:\n  repo: repo\n  files: [notes.txt, data]\n"
	if ref != "" {
		workspace += "  ref: " + ref + "\n"
	}
	yaml := exampleYAML(t, "replicates: 1\n", "replicates: 1\n"+workspace)
	path := filepath.Join(base, "exp.yaml")
	if err := os.WriteFile(path, yaml, 0o644); err != nil {
		t.Fatal(err)
	}
	return trialInput(t, yaml, path, "clean", "agent"), first
}

func TestPrepareWorkspaceGit(t *testing.T) {
	tests := []struct {
		ref, app string
	}{
		{"FIRST", "v1\n"}, // the first commit, by hash
		{"v1", "v1\n"},    // a tag
		{"feature", "feature\n"},
		{"main", "v2\n"},
		{"", "v2\n"}, // the default branch
	}
	for _, tt := range tests {
		t.Run("ref "+tt.ref, func(t *testing.T) {
			h, env := newHost(t)
			in, _ := gitSpec(t, tt.ref)
			// Leftovers of an earlier attempt must go.
			stale := filepath.Join(in.OutDir, "trials", filepath.FromSlash(in.Trial.ID), "record.jsonl")
			os.MkdirAll(filepath.Dir(stale), 0o755)
			os.WriteFile(stale, []byte("old rows\n"), 0o644)

			ws := must[run.Workspace](t, env, h.PrepareWorkspace, in)
			if !ws.Git || ws.TrialDir != filepath.Dir(stale) || !strings.HasPrefix(ws.Dir, h.WorkRoot) {
				t.Errorf("workspace %+v", ws)
			}
			for path, want := range map[string]string{
				filepath.Join(ws.Dir, "app.txt"):            tt.app,
				filepath.Join(ws.Dir, "notes.txt"):          "notes\n",
				filepath.Join(ws.Dir, "data", "extra.json"): `{"a":1}`,
				ws.SpecPath: string(in.Spec.YAML),
			} {
				if b, err := os.ReadFile(path); err != nil || string(b) != want {
					t.Errorf("%s: %q, %v; want %q", path, b, err, want)
				}
			}
			if _, err := os.Stat(stale); !os.IsNotExist(err) {
				t.Errorf("the earlier attempt's record is still there")
			}
		})
	}
}

func TestPrepareWorkspaceErrors(t *testing.T) {
	t.Run("unknown ref", func(t *testing.T) {
		h, env := newHost(t)
		in, _ := gitSpec(t, "no-such-branch")
		_, err := execute[run.Workspace](t, env, h.PrepareWorkspace, in)
		wantBadInput(t, err, `workspace.ref "no-such-branch" is not a branch, tag or commit`)
		if entries, _ := os.ReadDir(h.WorkRoot); len(entries) != 0 {
			t.Errorf("a failed preparation left %d sandboxes", len(entries))
		}
	})
	t.Run("missing file", func(t *testing.T) {
		h, env := newHost(t)
		yaml := exampleYAML(t, "replicates: 1\n", "replicates: 1\nworkspace:\n  files: [nowhere.txt]\n")
		in := trialInput(t, yaml, filepath.Join(t.TempDir(), "exp.yaml"), "clean", "agent")
		_, err := execute[run.Workspace](t, env, h.PrepareWorkspace, in)
		wantBadInput(t, err, "workspace.files: nowhere.txt does not exist (paths are relative to the spec's folder")
	})
	// A link that leads out of the spec's folder is refused, and neither what it points to
	// nor another run's live sandbox in the work root is touched.
	for _, tt := range []struct{ name, file, link, want string }{
		{"a link out of the spec's folder", "escape", "escape", `"escape" is a symbolic link to`},
		{"a folder holding a link out", "sub", "sub/out", `sub holds sub/out, a symbolic link to`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, env := newHost(t)
			outside := t.TempDir()
			canary := filepath.Join(outside, "canary.txt")
			os.WriteFile(canary, []byte("keep me"), 0o644)
			other := filepath.Join(h.WorkRoot, "another-run-trial-1")
			os.MkdirAll(other, 0o755)
			os.WriteFile(filepath.Join(other, "live.txt"), []byte("live"), 0o644)
			specDir := t.TempDir()
			os.MkdirAll(filepath.Join(specDir, "sub"), 0o755)
			if err := os.Symlink(outside, filepath.Join(specDir, tt.link)); err != nil {
				t.Fatal(err)
			}
			yaml := exampleYAML(t, "replicates: 1\n", "replicates: 1\nworkspace:\n  files: ["+tt.file+"]\n")
			in := trialInput(t, yaml, filepath.Join(specDir, "exp.yaml"), "clean", "agent")
			_, err := execute[run.Workspace](t, env, h.PrepareWorkspace, in)
			wantBadInput(t, err, tt.want)
			if b, err := os.ReadFile(canary); err != nil || string(b) != "keep me" {
				t.Errorf("the file outside was touched: %q %v", b, err)
			}
			if _, err := os.Stat(filepath.Join(other, "live.txt")); err != nil {
				t.Errorf("another run's sandbox was touched: %v", err)
			}
			if entries, _ := os.ReadDir(h.WorkRoot); len(entries) != 1 {
				t.Errorf("the work root holds %d folders; want only the other run's", len(entries))
			}
		})
	}
}

// Teardown removes the sandbox recorded for the trial, and nothing else: not another
// trial's sandbox named in its input, not the work root.
func TestTeardownRemovesOnlyTheRecordedSandbox(t *testing.T) {
	h, env := newHost(t)
	other := filepath.Join(h.WorkRoot, "another-run-trial-1")
	os.MkdirAll(other, 0o755)
	in := trialInput(t, exampleYAML(t), examplePath, "clean", "agent")
	ws := must[run.Workspace](t, env, h.PrepareWorkspace, in)
	forged := ws
	forged.Dir = other
	if _, err := env.ExecuteActivity(h.Teardown, run.TeardownInput{Trial: in, Workspace: forged, Reason: "teardown"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("Teardown removed a sandbox it did not record: %v", err)
	}
	if _, err := env.ExecuteActivity(h.Teardown, run.TeardownInput{Trial: in, Workspace: ws, Reason: "teardown"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ws.Dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the recorded sandbox %s is still there: %v", ws.Dir, err)
	}
	if _, err := os.Stat(h.WorkRoot); err != nil {
		t.Errorf("the work root went: %v", err)
	}
}

func TestPrepareWorkspaceEmptySandbox(t *testing.T) {
	h, env := newHost(t)
	in := trialInput(t, exampleYAML(t), examplePath, "clean", "agent")
	ws := must[run.Workspace](t, env, h.PrepareWorkspace, in)
	entries, err := os.ReadDir(ws.Dir)
	if err != nil || len(entries) != 0 || ws.Git {
		t.Errorf("sandbox %s: %v, %d entries, git %v; want an empty folder", ws.Dir, err, len(entries), ws.Git)
	}
}

func TestTeardown(t *testing.T) {
	h, env := newHost(t)
	in, _ := gitSpec(t, "FIRST")
	ws := must[run.Workspace](t, env, h.PrepareWorkspace, in)
	must[run.HubInfo](t, env, h.StartHub, run.AgentInput{Trial: in, Workspace: ws})

	// What an agent might do: change a tracked file and commit it, delete one, add one.
	os.WriteFile(filepath.Join(ws.Dir, "app.txt"), []byte("changed by the agent\n"), 0o644)
	commit := exec.Command("git", "-C", ws.Dir, "-c", "user.name=agent", "-c", "user.email=agent@example.com", "commit", "-q", "-am", "agent's work")
	if out, err := commit.CombinedOutput(); err != nil {
		t.Fatalf("commit in the sandbox: %v\n%s", err, out)
	}
	os.Remove(filepath.Join(ws.Dir, "keep.txt"))
	os.WriteFile(filepath.Join(ws.Dir, "new.txt"), []byte("brand new\n"), 0o644)

	td := run.TeardownInput{Trial: in, Workspace: ws, Reason: "agent exited"}
	for i := range 2 { // idempotent
		if _, err := env.ExecuteActivity(h.Teardown, td); err != nil {
			t.Fatalf("teardown #%d: %v", i+1, err)
		}
	}
	diff, err := os.ReadFile(filepath.Join(ws.TrialDir, "changes.diff"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"-v1", "+changed by the agent", "deleted file mode", "-unchanged", "new file mode", "+brand new", "+notes"} {
		if !strings.Contains(string(diff), want) {
			t.Errorf("changes.diff lacks %q:\n%s", want, diff)
		}
	}
	if _, err := os.Stat(ws.Dir); !os.IsNotExist(err) {
		t.Errorf("the sandbox is still there")
	}
	if h.live(in.Key()) != nil {
		t.Error("the hub is still kept")
	}

	// Nothing started at all.
	if _, err := env.ExecuteActivity(h.Teardown, run.TeardownInput{Trial: in}); err != nil {
		t.Errorf("teardown of nothing: %v", err)
	}
}

// Teardown removes only sandboxes it made, whatever its input says.
func TestTeardownLeavesForeignFolders(t *testing.T) {
	h := &Host{WorkRoot: t.TempDir()}
	foreign := t.TempDir()
	os.WriteFile(filepath.Join(foreign, "precious"), []byte("x"), 0o644)
	if err := h.Teardown(context.Background(), run.TeardownInput{Workspace: run.Workspace{Dir: foreign}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(foreign, "precious")); err != nil {
		t.Errorf("teardown removed a folder outside its work root: %v", err)
	}
}
