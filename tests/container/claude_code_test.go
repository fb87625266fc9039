package container

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashwall/chaos/tests/testkit"
)

// TestClaudeCodeInContainer (issue 29 item 8) runs the real Claude Code (tests/js's
// native claude binary, mounted read-only) as the agent of
// examples/support-ticket-claude-code.yaml in a container, its model the stand-in through
// the model proxy ({llm_url}), with the worker's TMPDIR under /tmp so that the sandbox,
// the container's working folder, lies under the container's /tmp. Claude Code writes
// to /tmp: with a /tmp the agent's user cannot write it exits 0 with no output and no
// model call. Here it must reach the model and the wall and be judged like the process
// run (clean correct, phantom_success on update_ticket silent_wrong).
func TestClaudeCodeInContainer(t *testing.T) {
	dk := needDocker(t)
	js := testkit.JSDir()
	claude, err := filepath.EvalSymlinks(filepath.Join(js, "node_modules", ".bin", "claude"))
	if err != nil {
		t.Fatalf("claude is not installed in tests/js (npm ci --prefix tests/js): %v", err)
	}
	modules, err := filepath.EvalSymlinks(filepath.Join(js, "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(repoRoot, "examples", "support-ticket-claude-code.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, r := range [][2]string{
		{"command: claude ", "command: env ANTHROPIC_BASE_URL={llm_url} " + claude + " "},
		{"faults: [all]", "faults: [phantom_success]\nmodel:\n  upstream: ${CHAOS_STANDIN_URL}"},
		{"  env: {", "  env: {ANTHROPIC_API_KEY: sk-ant-standin, DISABLE_TELEMETRY: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', "},
	} {
		if !strings.Contains(text, r[0]) {
			t.Fatalf("the Claude Code example has no %q to replace", r[0])
		}
		text = strings.Replace(text, r[0], r[1], 1)
	}
	// The worker's temporary folder under /tmp, as on a machine with TMPDIR unset.
	tmp, err := os.MkdirTemp("/tmp", "chaos-tmp-under-tmp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	dir := t.TempDir()
	src := filepath.Join(dir, "claude-code.yaml")
	if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	mounts := []string{js}
	if modules != filepath.Join(js, "node_modules") {
		mounts = append(mounts, modules)
	}
	specPath := withRuntime(t, src, t.TempDir(), dockerAgent(mounts...))

	standin := startStandinScript(t, filepath.Join(repoRoot, "tests", "model", "testdata", "claude-code.script.yaml"))
	env := append(testkit.Env(t, "CHAOS_STANDIN_URL="+standin), "TMPDIR="+tmp)
	out := filepath.Join(dir, "out")
	r := testkit.Run(t, chaosBin, env, runTimeout, "run", specPath, "--data-dir", t.TempDir(), "--out", out)
	if _, err := os.Stat(filepath.Join(out, "verdicts.json")); err != nil {
		t.Fatalf("chaos run: exit %d, no verdicts.json\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	t.Logf("chaos run: exit %d\n%s", r.Code, lastLines(r.Stdout, 10))
	if r.Code != 0 {
		t.Errorf("exit %d, want 0\nstderr:\n%s", r.Code, r.Stderr)
	}
	wantBlindVerdicts(t, out)
	if left := agentContainers(t, dk, runID(t, out)); len(left) > 0 {
		t.Errorf("containers left after the run: %v", left)
	}
}
