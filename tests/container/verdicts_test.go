package container

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/crashwall/chaos/tests/testkit"
)

// TestReferenceAgentsSameVerdicts runs the example spec (the blind and verifying
// reference agents, every condition it generates) twice with the same seed: as processes
// and in containers. Every trial gets the same verdict both ways, and no container is
// left after the docker run.
func TestReferenceAgentsSameVerdicts(t *testing.T) {
	dk := needDocker(t)
	example := filepath.Join(repoRoot, "examples", "support-ticket.yaml")
	env := testkit.Env(t)
	dir := t.TempDir()
	docker := withRuntime(t, example, dir, dockerAgent())

	outs := map[string]string{}
	for _, arm := range []struct{ name, spec string }{{"process", example}, {"docker", docker}} {
		out := filepath.Join(dir, arm.name)
		r := testkit.Run(t, chaosBin, env, 2*runTimeout, "run", arm.spec, "--data-dir", t.TempDir(), "--out", out)
		if _, err := os.Stat(filepath.Join(out, "verdicts.json")); err != nil {
			t.Fatalf("chaos run (%s): exit %d, no verdicts.json\nstdout:\n%s\nstderr:\n%s", arm.name, r.Code, r.Stdout, r.Stderr)
		}
		t.Logf("%s run: exit %d\n%s", arm.name, r.Code, lastLines(r.Stdout, 12))
		outs[arm.name] = out
	}
	proc, dock := verdicts(t, outs["process"]), verdicts(t, outs["docker"])
	if len(proc) == 0 || len(proc) != len(dock) {
		t.Fatalf("%d trials as processes, %d in containers", len(proc), len(dock))
	}
	ids := make([]string, 0, len(proc))
	for id := range proc {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	counts := map[string]int{}
	for _, id := range ids {
		p, d := proc[id], dock[id]
		if p.Seed != d.Seed {
			t.Errorf("%s: seed %d as a process, %d in a container: not the same trial", id, p.Seed, d.Seed)
		}
		if p.Verdict != d.Verdict || p.Outcome != d.Outcome {
			t.Errorf("%s: %s/%s as a process, %s/%s in a container (%s | %s)", id, p.Outcome, p.Verdict, d.Outcome, d.Verdict, p.Reason, d.Reason)
		}
		counts[string(d.Verdict)]++
	}
	t.Logf("%d trials, the same verdict both ways: %v", len(ids), counts)
	if counts["correct"] == 0 || counts["silent_wrong"] == 0 {
		t.Errorf("the example should give both correct and silent_wrong trials: %v", counts)
	}
	if left := agentContainers(t, dk, runID(t, outs["docker"])); len(left) > 0 {
		t.Errorf("containers left after the run: %v", left)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
