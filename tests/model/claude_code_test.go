package model

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClaudeCode runs Claude Code (the @anthropic-ai/claude-code npm package, offline
// against the stand-in model through ANTHROPIC_BASE_URL) as the agent of
// examples/support-ticket-claude-code.yaml, with the stand-in playing a blind agent:
//
//   - as documented (--allowedTools mcp__chaos): clean is correct, phantom_success on
//     update_ticket is silent_wrong, exit 0;
//   - with its tools blocked (no --allowedTools: claude -p refuses them and lists the
//     refusals under permission_denials): no_verdict (tools_refused) with what to change,
//     no rate, exit 4.
func TestClaudeCode(t *testing.T) {
	claude := filepath.Join(jsDir, "node_modules", ".bin", "claude")
	if _, err := os.Stat(claude); err != nil {
		t.Fatalf("claude is not installed in tests/js (npm ci --prefix tests/js): %v", err)
	}
	standin := startStandin(t, filepath.Join(repoRoot, "tests", "model", "testdata", "claude-code.script.yaml"))
	b, err := os.ReadFile(filepath.Join(repoRoot, "examples", "support-ticket-claude-code.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	example := string(b)
	dir := t.TempDir()
	// The example as a user would run it, with claude from tests/js, a home of its own
	// (no login, no settings of the machine's user) and the stand-in as its model.
	writeSpec := func(name string, blocked bool) string {
		home := filepath.Join(dir, "home-"+name)
		os.MkdirAll(home, 0o755)
		text := strings.Replace(example, "command: claude ", "command: "+claude+" ", 1)
		if blocked {
			text = strings.Replace(text, "--mcp-config {mcp_config} --allowedTools mcp__chaos", "--mcp-config {mcp_config}", 1)
		}
		text = strings.Replace(text, "faults: [all]", "faults: [phantom_success]", 1)
		text = strings.Replace(text, "  env: {", "  env: {HOME: "+home+", ANTHROPIC_BASE_URL: '"+standin+"', ANTHROPIC_API_KEY: sk-ant-standin, DISABLE_TELEMETRY: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', ", 1)
		if text == example {
			t.Fatal("the example did not change")
		}
		p := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	env := testEnv(t)
	data := t.TempDir()
	t.Run("as documented", func(t *testing.T) {
		out := filepath.Join(dir, "allowed")
		r := runChaos(t, env, runTimeout, "run", writeSpec("allowed", false), "--data-dir", data, "--out", out)
		r.MustSucceed(t, "chaos run")
		got := trialVerdicts(t, out)
		if got["clean"][0] != "correct" || got["phantom_success@update_ticket"][0] != "silent_wrong" {
			t.Errorf("verdicts %v, want clean correct and phantom_success@update_ticket silent_wrong\n%s", got, r.Stdout)
		}
	})
	t.Run("tools blocked", func(t *testing.T) {
		out := filepath.Join(dir, "blocked")
		r := runChaos(t, env, runTimeout, "run", writeSpec("blocked", true), "--only", "clean", "--data-dir", data, "--out", out)
		if r.Code != 4 {
			t.Fatalf("exit %d, want 4 (no trial scored)\n%s\n%s", r.Code, r.Stdout, r.Stderr)
		}
		if got := trialVerdicts(t, out)["clean"]; got[0] != "no_verdict" || got[1] != "tools_refused" {
			t.Errorf("clean: %v, want no_verdict, tools_refused", got)
		}
		if !strings.Contains(r.Stdout, "For Claude Code add --allowedTools mcp__chaos") || !strings.Contains(r.Stdout, "no trial could be scored") {
			t.Errorf("the console does not say what to change:\n%s", r.Stdout)
		}
	})
}
