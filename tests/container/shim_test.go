package container

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/tests/testkit"
)

// TestPortalShimInContainer runs examples/portal (a skill whose agent runs the project's
// scripts) with its shell agents in a container (FROM scratch, the host's sh and python3
// mounted read-only, --network none) and as processes: the launchers and the relay reach
// the hub through the shim's folder mounted into the container, and every trial gets the
// same verdict both ways: the blind agent correct on clean and silent_wrong under phantom
// success, the verifying one correct on both. The real scripts never run (the canary).
func TestPortalShimInContainer(t *testing.T) {
	dk := needDocker(t)
	env, tmp := testkit.EnvDir(t)
	dir := filepath.Join(tmp, "portal")
	if out, err := exec.Command("cp", "-R", filepath.Join(repoRoot, "examples", "portal"), dir).CombinedOutput(); err != nil {
		t.Fatalf("copy the example: %v: %s", err, out)
	}
	canary := filepath.Join(tmp, "canary")
	env = append(env, "PORTAL_CANARY="+canary)
	docker := withRuntime(t, filepath.Join(dir, "portal.yaml"), t.TempDir(), dockerAgent())
	// The spec's folder is the project: the docker spec goes beside the original.
	dockerSpec := filepath.Join(dir, "portal-docker.yaml")
	if err := os.Rename(docker, dockerSpec); err != nil {
		t.Fatal(err)
	}
	only := "clean,phantom_success@book_shipment"
	for _, agent := range []string{"blind", "verifying"} {
		got, why := map[string]map[string]string{}, map[string]string{}
		var dockOut string
		for _, arm := range []struct{ name, spec string }{{"process", filepath.Join(dir, "portal.yaml")}, {"docker", dockerSpec}} {
			out := filepath.Join(t.TempDir(), arm.name)
			r := testkit.Run(t, chaosBin, env, runTimeout, "run", arm.spec, "--data-dir", t.TempDir(), "--out", out, "--only", only, "--", "sh agents/"+agent+".sh")
			if _, err := os.Stat(filepath.Join(out, "verdicts.json")); err != nil {
				t.Fatalf("chaos run (%s, %s): exit %d\nstdout:\n%s\nstderr:\n%s", agent, arm.name, r.Code, r.Stdout, r.Stderr)
			}
			got[arm.name] = map[string]string{}
			for _, v := range verdicts(t, out) {
				got[arm.name][v.Condition] = v.Verdict
				why[arm.name+" "+v.Condition] = v.Reason + " | " + v.VerdictWhy
				if arm.name == "docker" {
					l, err := record.ReadFile(filepath.Join(v.Dir, "record.jsonl"))
					if err != nil {
						t.Fatal(err)
					}
					n := 0
					for _, row := range l.Rows {
						if row.Transport == "shim" && row.Type == record.TypeCall {
							n++
						}
					}
					if n == 0 {
						t.Errorf("%s in a container, %s: no call reached the twin through the shim (%s)", agent, v.Condition, v.VerdictWhy)
					}
				}
			}
			if arm.name == "docker" {
				dockOut = out
			}
		}
		want := map[string]string{"clean": "correct", "phantom_success@book_shipment": "silent_wrong"}
		if agent == "verifying" {
			want["phantom_success@book_shipment"] = "correct"
		}
		for c, v := range want {
			if got["process"][c] != v || got["docker"][c] != v {
				t.Errorf("%s, %s: %q as a process (%s), %q in a container (%s); want %s both ways", agent, c,
					got["process"][c], why["process "+c], got["docker"][c], why["docker "+c], v)
			}
		}
		if left := agentContainers(t, dk, runID(t, dockOut)); len(left) > 0 {
			t.Errorf("containers left after the run: %v", left)
		}
	}
	if b, err := os.ReadFile(canary); err == nil {
		t.Errorf("a real portal script ran (the canary says):\n%s", b)
	}
}
