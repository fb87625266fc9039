package model

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/tests/testkit"
)

// TestClaudeCodeShim runs Claude Code (tests/js, offline against the stand-in model) on
// the portal example's skill: its Bash tool runs the project's scripts, which the script
// shim (docs/shim.md) answers from the twin. It is right on clean and on phantom success
// (it reads back, sees the booking missing, books again); every script call went through
// the shim, and the real scripts never ran (their canary).
func TestClaudeCodeShim(t *testing.T) {
	claude := filepath.Join(jsDir, "node_modules", ".bin", "claude")
	if _, err := os.Stat(claude); err != nil {
		t.Fatalf("claude is not installed in tests/js (npm ci --prefix tests/js): %v", err)
	}
	standin := startStandin(t, filepath.Join(repoRoot, "tests", "model", "testdata", "claude-code-portal.script.yaml"))
	dir := t.TempDir()
	proj := filepath.Join(dir, "portal")
	if out, err := exec.Command("cp", "-R", filepath.Join(repoRoot, "examples", "portal"), proj).CombinedOutput(); err != nil {
		t.Fatalf("copy the example: %v: %s", err, out)
	}
	home := filepath.Join(dir, "home")
	os.MkdirAll(home, 0o755)
	b, err := os.ReadFile(filepath.Join(proj, "portal.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(b), "  command: sh agents/verifying.sh  # PATH starts with the shim ({shim_path})\n  timeout: 2m",
		"  command: "+claude+" -p {task} --allowedTools Bash --output-format json\n  profile: claude-code\n  timeout: 5m\n"+
			"  env: {HOME: "+home+", ANTHROPIC_BASE_URL: '"+standin+"', ANTHROPIC_API_KEY: sk-ant-standin, DISABLE_TELEMETRY: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1'}", 1)
	if text == string(b) {
		t.Fatal("the example's agent did not change")
	}
	spec := filepath.Join(proj, "portal-claude-code.yaml")
	if err := os.WriteFile(spec, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	canary := filepath.Join(dir, "canary")
	out := filepath.Join(dir, "run")
	r := runChaos(t, testEnv(t, "PORTAL_CANARY="+canary), runTimeout, "run", spec, "--only", "clean,phantom_success@book_shipment",
		"--concurrency", "2", "--data-dir", filepath.Join(dir, "data"), "--out", out)
	r.MustSucceed(t, "chaos run")
	var rs []run.TrialResult
	testkit.ReadJSON(t, filepath.Join(out, "verdicts.json"), &rs)
	if len(rs) != 2 {
		t.Fatalf("%d trials, want 2", len(rs))
	}
	for _, res := range rs {
		if res.Verdict != "correct" || len(res.Units) != 2 {
			t.Errorf("%s: %s (%s), units %+v; want correct, both units", res.Condition, res.Verdict, res.VerdictWhy, res.Units)
		}
		l, err := record.ReadFile(filepath.Join(res.Dir, "record.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		books, fired := 0, 0
		for _, row := range l.Calls() {
			if row.Transport != "shim" {
				t.Errorf("%s: a call not through the shim: %+v", res.Condition, row)
			}
			if row.Tool == "book_shipment" {
				books++
			}
			if row.Hit != nil && row.Hit.Fired {
				fired++
			}
		}
		// Clean: one booking an order; phantom success: R-101 booked again after its read-back.
		want := map[string]int{"clean": 2, "phantom_success@book_shipment": 3}[res.Condition]
		if books != want || (res.Condition != "clean") != (fired == 1) {
			t.Errorf("%s: %d bookings, %d fired; want %d bookings and the fault fired once when armed", res.Condition, books, fired, want)
		}
	}
	if b, err := os.ReadFile(canary); err == nil {
		t.Errorf("a real portal script ran:\n%s", b)
	}
}
