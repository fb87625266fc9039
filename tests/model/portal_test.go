package model

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/tests/testkit"
)

// claudePortal is a copy of examples/portal in a test's temporary folder, to be run by
// Claude Code (tests/js) against a stand-in model that plays a script of testdata.
type claudePortal struct {
	claude  string // Claude Code's path
	standin string // the stand-in model's address
	dir     string // the temporary folder: portal/ (the copy), home/, canary, run/, data/
	proj    string // dir/portal
}

func newClaudePortal(t *testing.T, script string) claudePortal {
	t.Helper()
	claude := filepath.Join(jsDir, "node_modules", ".bin", "claude")
	if _, err := os.Stat(claude); err != nil {
		t.Fatalf("claude is not installed in tests/js (npm ci --prefix tests/js): %v", err)
	}
	p := claudePortal{claude: claude, standin: startStandin(t, filepath.Join(repoRoot, "tests", "model", "testdata", script)), dir: t.TempDir()}
	p.proj = filepath.Join(p.dir, "portal")
	if out, err := exec.Command("cp", "-R", filepath.Join(repoRoot, "examples", "portal"), p.proj).CombinedOutput(); err != nil {
		t.Fatalf("copy the example: %v: %s", err, out)
	}
	os.MkdirAll(filepath.Join(p.dir, "home"), 0o755)
	return p
}

// agent is the spec's agent block for Claude Code with its tools limited to Bash, a home
// of its own and the stand-in model, with the timeout given.
func (p claudePortal) agent(timeout string) string {
	return "  command: " + p.claude + " -p {task} --allowedTools Bash --output-format json\n  profile: claude-code\n  timeout: " + timeout + "\n" +
		"  env: {HOME: " + filepath.Join(p.dir, "home") + ", ANTHROPIC_BASE_URL: '" + p.standin + "', ANTHROPIC_API_KEY: sk-ant-standin, DISABLE_TELEMETRY: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1'}"
}

// spec writes the copy's spec from as name beside it, with each edit (old, new pairs)
// made once; an edit that finds nothing to change fails the test.
func (p claudePortal) spec(t *testing.T, from, name string, edits ...string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(p.proj, from))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for i := 0; i+1 < len(edits); i += 2 {
		edited := strings.Replace(text, edits[i], edits[i+1], 1)
		if edited == text {
			t.Fatalf("%s has no %q to change", from, edits[i])
		}
		text = edited
	}
	spec := filepath.Join(p.proj, name)
	if err := os.WriteFile(spec, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return spec
}

// run runs `chaos run spec args...` (the real portal scripts write the canary if they
// run) and returns the run's verdicts.
func (p claudePortal) run(t *testing.T, spec string, args ...string) []run.TrialResult {
	t.Helper()
	out := filepath.Join(p.dir, "run")
	args = append([]string{"run", spec}, append(args, "--data-dir", filepath.Join(p.dir, "data"), "--out", out)...)
	r := runChaos(t, testEnv(t, "PORTAL_CANARY="+p.canary()), runTimeout, args...)
	r.MustSucceed(t, "chaos run")
	var rs []run.TrialResult
	testkit.ReadJSON(t, filepath.Join(out, "verdicts.json"), &rs)
	return rs
}

func (p claudePortal) canary() string { return filepath.Join(p.dir, "canary") }

// noRealScript fails the test if a real portal script ran.
func (p claudePortal) noRealScript(t *testing.T) {
	t.Helper()
	if b, err := os.ReadFile(p.canary()); err == nil {
		t.Errorf("a real portal script ran:\n%s", b)
	}
}
