package testkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// GitPlants are the ways an agent with workspace.repo plants a command for git to run
// after its trial, or points its sandbox's git at another repository (issue 28 item 1):
// each is a value of the plant axis of GitPlantSpec, and the name of the canary file
// (<pwned>-<plant>) its command would create.
var GitPlants = []string{"fsmonitor", "textconv", "filter", "hooks", "external", "gitdir", "gitlink", "broken"}

// gitPlantsUnread are the plants after which the sandbox's changes cannot be read: the
// trial says why in changes.missing.
var gitPlantsUnread = map[string]string{
	"gitdir":  "the sandbox's .git is a file",
	"gitlink": "the sandbox's .git is a symbolic link",
	"broken":  "cannot be read from the sandbox's .git",
}

// gitPlantScript is the agent: it changes app.txt, then plants $1 by writing the
// sandbox's .git and worktree directly (no git needed where it runs).
const gitPlantScript = `set -e
P=%[1]s
OTHER=%[2]s
printf 'changed by the agent\n' > app.txt
case "$1" in
fsmonitor) printf '[core]\n\tfsmonitor = touch %%s-fsmonitor && true\n\tuntrackedCache = true\n' "$P" >> .git/config ;;
textconv)
  printf '[diff "x"]\n\ttextconv = touch %%s-textconv && cat\n' "$P" >> .git/config
  printf '* diff=x\n' > .gitattributes ;;
filter)
  printf '[filter "x"]\n\tclean = touch %%s-filter && cat\n\tsmudge = touch %%s-filter && cat\n\trequired = true\n' "$P" "$P" >> .git/config
  printf '* filter=x\n' > .gitattributes ;;
hooks)
  mkdir -p .githooks .git/hooks
  for h in post-index-change pre-commit post-checkout reference-transaction pre-auto-gc; do
    printf '#!/bin/sh\ntouch %%s-hooks\n' "$P" > .githooks/$h
    chmod +x .githooks/$h
    cp .githooks/$h .git/hooks/$h
  done
  printf '[core]\n\thooksPath = .githooks\n' >> .git/config ;;
external) printf '[diff]\n\texternal = touch %%s-external && true\n' "$P" >> .git/config ;;
gitdir) rm -rf .git; printf 'gitdir: %%s/.git\n' "$OTHER" > .git ;;
gitlink) rm -rf .git; ln -s "$OTHER/.git" .git ;;
broken) rm -rf .git/objects; printf 'broken\n' > .git/objects ;;
esac
echo "planted $1"
`

// GitPlantSpec writes into dir a repository (repo/, one commit of app.txt), the agent's
// script (plant.sh, copied into every sandbox) and a spec (git.yaml) whose agent plants
// each of GitPlants, one trial each; agentExtra is YAML added to its agent section (a
// container runtime). pwned is the canary path prefix, other a repository outside that
// a .git file points at. It returns the spec's path.
func GitPlantSpec(t testing.TB, dir, pwned, other, agentExtra string) string {
	t.Helper()
	GitRepo(t, filepath.Join(dir, "repo"))
	script := fmt.Sprintf(gitPlantScript, shellQuote(pwned), shellQuote(other))
	if err := os.WriteFile(filepath.Join(dir, "plant.sh"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	yaml := "name: git-plants\ntask: change app.txt\ntools: [{name: note, effect: write}]\n" +
		"agent:\n  command: sh plant.sh {plant}\n  timeout: 60s\n" + agentExtra +
		"workspace: {repo: repo, files: [plant.sh]}\n" +
		"axes: {plant: [" + strings.Join(GitPlants, ", ") + "]}\n"
	path := filepath.Join(dir, "git.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// GitRepo makes a repository at dir with one commit of app.txt, with git's own
// configuration off (no system or global file).
func GitRepo(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "app.txt"), []byte("v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "app.txt"}, {"commit", "-q", "-m", "first"}} {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// CheckGitPlants fails the test unless, after the run in out, no planted command ran (no
// <pwned>-* file), the other repository's index is otherIndex byte for byte, every
// trial's folder holds its diff (the agent's change to app.txt) or changes.missing saying
// why, and its result.json reads.
func CheckGitPlants(t testing.TB, out, pwned, other string, otherIndex []byte) {
	t.Helper()
	if ran, _ := filepath.Glob(pwned + "-*"); len(ran) > 0 {
		t.Errorf("a command the agent planted for git ran: %v", ran)
	}
	if b, err := os.ReadFile(filepath.Join(other, ".git", "index")); err != nil || !bytes.Equal(b, otherIndex) {
		t.Errorf("the repository outside (%s) had its index changed: %v", other, err)
	}
	for _, plant := range GitPlants {
		trial := filepath.Join(out, "trials", "plant="+plant, "clean", "1")
		var res map[string]any
		b, err := os.ReadFile(filepath.Join(trial, "result.json"))
		if err != nil || json.Unmarshal(b, &res) != nil {
			t.Errorf("%s: result.json does not read: %v\n%s", plant, err, b)
		}
		if b, _ := os.ReadFile(filepath.Join(trial, "stdout")); !strings.Contains(string(b), "planted "+plant+"\n") {
			stderr, _ := os.ReadFile(filepath.Join(trial, "stderr"))
			t.Errorf("%s: the agent did not plant it\nstdout:\n%s\nstderr:\n%s", plant, b, stderr)
		}
		diff, derr := os.ReadFile(filepath.Join(trial, "changes.diff"))
		missing, merr := os.ReadFile(filepath.Join(trial, "changes.missing"))
		if want, ok := gitPlantsUnread[plant]; ok {
			if merr != nil || !strings.Contains(string(missing), want) || derr == nil {
				t.Errorf("%s: changes.missing %q (%v), changes.diff there: %v; want only changes.missing saying %q", plant, missing, merr, derr == nil, want)
			}
			continue
		}
		if derr != nil || !strings.Contains(string(diff), "+changed by the agent") || !strings.Contains(string(diff), "-v1") || merr == nil {
			t.Errorf("%s: changes.diff %v:\n%s\nchanges.missing: %s; want the agent's change to app.txt", plant, derr, diff, missing)
		}
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
