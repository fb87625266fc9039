package container

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashwall/chaos/tests/testkit"
)

// TestAgentsSDKInContainer runs a real agent client, the OpenAI Agents SDK for
// JavaScript (tests/js/agents-sdk-agent.mjs, run by the host's node mounted read-only),
// inside the container: its model is the stand-in through {llm_url}, its tools the wall
// through {wall_url}/mcp, both reached only through the relay. Its script is blind (it
// never reads a write back), so it is correct on the clean condition and silent_wrong
// when the ticket system acknowledges a write it did not store (phantom_success).
func TestAgentsSDKInContainer(t *testing.T) {
	dk := needDocker(t)
	testkit.Node(t, "@openai/agents", "openai")
	js := testkit.JSDir()
	modules, err := filepath.EvalSymlinks(filepath.Join(js, "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(repoRoot, "tests", "model", "testdata", "agents-sdk.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The container has none of the worker's environment: CHAOS_JS comes through agent.env.
	const envLine = `env: {OPENAI_AGENTS_DISABLE_TRACING: "1"}`
	text := string(b)
	if !strings.Contains(text, envLine) {
		t.Fatalf("the Agents SDK spec has no line %q to extend", envLine)
	}
	text = strings.Replace(text, envLine, `env: {OPENAI_AGENTS_DISABLE_TRACING: "1", CHAOS_JS: "${CHAOS_JS}"}`, 1)
	dir := t.TempDir()
	src := filepath.Join(dir, "agents-sdk.yaml")
	os.WriteFile(src, []byte(text), 0o644)
	mounts := []string{js}
	if modules != filepath.Join(js, "node_modules") {
		mounts = append(mounts, modules) // node_modules is a link to elsewhere
	}
	specPath := withRuntime(t, src, t.TempDir(), dockerAgent(mounts...))

	standin := startStandin(t)
	env := testkit.Env(t, "CHAOS_JS="+js, "CHAOS_STANDIN_URL="+standin)
	out := filepath.Join(dir, "out")
	r := testkit.Run(t, chaosBin, env, runTimeout, "run", specPath, "--only", "clean,phantom_success@update_ticket", "--reps", "1",
		"--data-dir", t.TempDir(), "--out", out)
	if _, err := os.Stat(filepath.Join(out, "verdicts.json")); err != nil {
		t.Fatalf("chaos run: exit %d, no verdicts.json\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	t.Logf("chaos run: exit %d\n%s", r.Code, lastLines(r.Stdout, 10))
	wantBlindVerdicts(t, out)
	// The calls reached the hub through the relay: the record holds the model's calls
	// and the tools' (MCP over HTTP).
	rec, _ := os.ReadFile(filepath.Join(out, "trials", "main", "clean", "1", "record.jsonl"))
	if !strings.Contains(string(rec), "chat/completions") || !strings.Contains(string(rec), `"update_ticket"`) {
		t.Errorf("the clean trial's record lacks the model's or the tools' calls:\n%.3000s", rec)
	}
	if left := agentContainers(t, dk, runID(t, out)); len(left) > 0 {
		t.Errorf("containers left after the run: %v", left)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// wantBlindVerdicts wants run folder out to hold a blind agent's verdicts: the clean
// trial correct and phantom_success on update_ticket silent_wrong; a trial judged
// otherwise is shown with its closing message and its output.
func wantBlindVerdicts(t *testing.T, out string) {
	t.Helper()
	want := map[string]string{"main/clean/1": "correct", "main/phantom_success@update_ticket/1": "silent_wrong"}
	got := verdicts(t, out)
	for id, w := range want {
		v, ok := got[id]
		if !ok {
			t.Errorf("no trial %s (trials: %v)", id, keys(got))
			continue
		}
		if string(v.Verdict) != w {
			stdout, _ := os.ReadFile(filepath.Join(out, "trials", filepath.FromSlash(id), "stdout"))
			stderr, _ := os.ReadFile(filepath.Join(out, "trials", filepath.FromSlash(id), "stderr"))
			t.Errorf("%s: %s/%s (%s), want %s; closing %q\nstdout:\n%.2000s\nstderr:\n%.2000s", id, v.Outcome, v.Verdict, v.Reason, w, v.Closing, stdout, stderr)
		} else {
			t.Logf("%s: %s, closing %q, %d calls", id, v.Verdict, v.Closing, v.Calls)
		}
	}
}
