package container

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/crashwall/chaos/tests/testkit"
)

// TestGitPlantsInContainer (issue 28 item 1): an agent in a container (uid 65534, no
// network) plants every source of commands git reads in its sandbox's .git and
// worktree, points .git at a repository of the host, or breaks it; after the run nothing
// of it ran on the host, the host's repository keeps its index, no sandbox is left, and
// each trial has its diff or says why not.
func TestGitPlantsInContainer(t *testing.T) {
	dk := needDocker(t)
	env, tmp := testkit.EnvDir(t)
	other := filepath.Join(tmp, "other-repo")
	testkit.GitRepo(t, other)
	index, err := os.ReadFile(filepath.Join(other, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(tmp, "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	pwned := filepath.Join(outside, "pwned")
	dir := filepath.Join(tmp, "spec")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := testkit.GitPlantSpec(t, dir, pwned, other, dockerAgent())
	out := filepath.Join(tmp, "run")
	r := testkit.Run(t, chaosBin, env, runTimeout, "run", path, "--only", "clean", "--out", out)
	if r.Code != 4 { // the agent never meets the wall: no score
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	testkit.CheckGitPlants(t, out, pwned, other, index)
	root := filepath.Join(tmp, "tmp", "chaos-work-"+strconv.Itoa(os.Getuid()))
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		t.Errorf("the work root still holds %s", e.Name())
	}
	if left := agentContainers(t, dk, runID(t, out)); len(left) > 0 {
		t.Errorf("agent containers left: %v", left)
	}
}
