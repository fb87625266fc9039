package upstream_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/spec"
)

// TestRecordRoundTrip records the verifying reference agent's real run against
// server-memory, then runs the spec it wrote: the clean condition comes out correct,
// and the probes it inferred catch the blind agent's swallowed write.
func TestRecordRoundTrip(t *testing.T) {
	t.Parallel()
	env, tmp := testEnv(t)
	script := writeFile(t, tmp, "script.yaml", memoryScript)
	out := filepath.Join(tmp, "recorded.yaml")
	sv := memoryServer(t)
	server := "MEMORY_FILE_PATH={sandbox}/memory.jsonl " + shellQuote(sv.Command) + " " + shellQuote(sv.Args[0])
	agent := func(style string) []string {
		return []string{chaosBin, "agent", "scripted", "--style", style, "--transport", "stdio", "--wall-command", "{wall}", "--script", script}
	}
	args := append([]string{"record", "--task", "Remember that Alice is a person who likes tea.", "--server", server, "--out", out, "--"}, agent("verifying")...)

	refused := runChaos(t, env, time.Minute, args...)
	if refused.code != 1 || !strings.Contains(refused.stderr, "--allow-real-calls") {
		t.Fatalf("without --allow-real-calls: exit %d, stderr %q; want exit 1 and the reason", refused.code, refused.stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a refused record wrote a spec")
	}

	rec := runChaos(t, env, 15*time.Minute, append([]string{args[0], "--allow-real-calls"}, args[1:]...)...)
	if rec.code != 0 {
		t.Fatalf("chaos record exited %d\nstdout:\n%s\nstderr:\n%s", rec.code, rec.stdout, rec.stderr)
	}
	text, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# - create_entities writes (annotation readOnlyHint: false)",
		"# - open_nodes reads (annotation readOnlyHint: true)",
		`# - open_nodes read back what create_entities wrote: "Alice" at $.entities[0].name`,
		"# - env MEMORY_FILE_PATH holds {sandbox}",
		"# - the agent's closing message has a STATUS: line",
	} {
		if !strings.Contains(string(text), want) {
			t.Errorf("the recorded spec has no line %q:\n%s", want, text)
		}
	}
	s, err := spec.Load(out)
	if err != nil {
		t.Fatalf("the recorded spec does not load: %v\n%s", err, text)
	}
	probes := s.AllProbes()
	if len(probes) == 0 || probes[0].Tool != "open_nodes" || probes[0].Want.Key != "$.entities[0].name" || probes[0].Want.Equals != "Alice" {
		t.Errorf("probes %+v", probes)
	}
	if ct := s.Servers[0].Tools["create_entities"]; ct.Effect != spec.EffectWrite || !strings.Contains(ct.Reply, "Alice") || len(ct.Structured) == 0 {
		t.Errorf("create_entities in the spec: %+v", ct)
	}

	// The recorded spec runs as it is: the clean condition is correct.
	runOut := filepath.Join(tmp, "run")
	res := runChaos(t, env, 15*time.Minute, "run", out, "--out", runOut, "--only", "clean,phantom_success@create_entities")
	if res.code != 0 {
		t.Fatalf("chaos run exited %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	got := trialResults(t, runOut)
	if r := got["main clean"]; r.Verdict != "correct" {
		t.Errorf("clean: %s (%s), checks %+v", r.Verdict, r.VerdictWhy, r.Checks)
	}
	if r := got["main phantom_success@create_entities"]; r.Verdict != "correct" {
		t.Errorf("verifying under phantom success: %s (%s), checks %+v", r.Verdict, r.VerdictWhy, r.Checks)
	}

	// The same spec with the blind agent: its probes catch the write the wall swallowed.
	blindOut := filepath.Join(tmp, "blind")
	res = runChaos(t, env, 15*time.Minute, append([]string{"run", out, "--out", blindOut, "--only", "clean,phantom_success@create_entities", "--"}, agent("blind")...)...)
	if res.code != 0 {
		t.Fatalf("chaos run (blind) exited %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	got = trialResults(t, blindOut)
	if r := got["main clean"]; r.Verdict != "correct" {
		t.Errorf("blind clean: %s (%s)", r.Verdict, r.VerdictWhy)
	}
	if r := got["main phantom_success@create_entities"]; r.Verdict != "silent_wrong" {
		t.Errorf("blind under phantom success: %s (%s), checks %+v", r.Verdict, r.VerdictWhy, r.Checks)
	}
}
