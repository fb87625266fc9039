package model

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/tests/testkit"
)

// TestCodex runs Codex itself (the @openai/codex npm package, its Linux binary) as the
// agent of examples/support-ticket-codex.yaml, offline: its model is the stand-in, given
// as a model provider in the config.toml of a Codex home of its own (as a Codex user
// names any Responses API endpoint), and the stand-in plays a blind agent. Codex lists
// the wall's tools in the Responses API namespace mcp__chaos; the stand-in answers with
// the tool and its namespace, as the Responses API does (proxies/standin_namespace.go).
//
//   - as documented (-c {codex_config}): every scripted call reaches the wall; clean is
//     correct, phantom_success on update_ticket is silent_wrong, exit 0;
//   - with its tools blocked (the wall's server without the approval, so codex exec,
//     whose approval policy is never, refuses every call: "MCP tool call requires
//     approval"): no_verdict (tools_refused) with what to change, no rate, exit 4.
func TestCodex(t *testing.T) {
	codex := filepath.Join(jsDir, "node_modules", ".bin", "codex")
	if _, err := os.Stat(codex); err != nil {
		t.Fatalf("codex is not installed in tests/js (npm ci --prefix tests/js): %v", err)
	}
	standin := startStandin(t, filepath.Join(repoRoot, "tests", "model", "testdata", "codex.script.yaml"))
	b, err := os.ReadFile(filepath.Join(repoRoot, "examples", "support-ticket-codex.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	example := string(b)
	dir := t.TempDir()
	// The example as a user would run it, with codex from tests/js, a home of its own (no
	// login, no settings of the machine's user) whose config.toml names the stand-in as
	// the model provider.
	writeSpec := func(name string, blocked bool) string {
		home := filepath.Join(dir, "home-"+name)
		codexHome := filepath.Join(home, ".codex")
		if err := os.MkdirAll(codexHome, 0o755); err != nil {
			t.Fatal(err)
		}
		config := fmt.Sprintf(`model = "standin"
model_provider = "standin"

[model_providers.standin]
name = "chaos stand-in model"
base_url = "%s/v1"
wire_api = "responses"
env_key = "STANDIN_API_KEY"
`, standin)
		if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o644); err != nil {
			t.Fatal(err)
		}
		text := strings.Replace(example, "command: codex ", "command: "+codex+" ", 1)
		if blocked {
			// The wall's server as given, its tools back to asking for an approval.
			text = strings.Replace(text, "-c {codex_config} {task}", `-c {codex_config} -c 'mcp_servers.chaos.default_tools_approval_mode="prompt"' {task}`, 1)
		}
		text = strings.Replace(text, "faults: [all]", "faults: [phantom_success]", 1)
		text = strings.Replace(text, "  profile: codex\n", "  profile: codex\n  env: {HOME: "+home+", CODEX_HOME: "+codexHome+", STANDIN_API_KEY: standin}\n", 1)
		if strings.Count(text, codex) != 1 || !strings.Contains(text, "CODEX_HOME") || blocked != strings.Contains(text, `"prompt"`) {
			t.Fatalf("the example did not change as expected:\n%s", text)
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
		// Every call the stand-in made reached the wall, read_email first: Codex found
		// each tool by its namespace.
		for _, cond := range []string{"clean", "phantom_success@update_ticket"} {
			path := filepath.Join(out, "trials", "main", cond, "1", "record.jsonl")
			l, err := record.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var calls []string
			for _, c := range l.Calls() {
				calls = append(calls, c.Tool+" "+string(c.Args))
			}
			want := []string{"read_email {}", `update_ticket {"field":"priority","value":"urgent"}`, `update_ticket {"field":"team","value":"payments"}`}
			if !slices.Equal(calls, want) {
				t.Errorf("%s: calls at the wall %q, want %q", path, calls, want)
			}
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
		for _, want := range []string{
			"tools_refused: the agent refused or could not run the wall's tools (chaos.read_email, chaos.update_ticket): For Codex give the wall with -c {codex_config}",
			"no trial could be scored",
			"main                 0/0 = n/a",
		} {
			if !strings.Contains(r.Stdout, want) {
				t.Errorf("the console does not say %q:\n%s", want, r.Stdout)
			}
		}
	})
}

// trialVerdicts is the verdict and the unreached reason of each condition's trial, from a
// run's verdicts.json.
func trialVerdicts(t *testing.T, out string) map[string][]string {
	t.Helper()
	var trials []struct{ Condition, Verdict, Unreached string }
	testkit.ReadJSON(t, filepath.Join(out, "verdicts.json"), &trials)
	got := map[string][]string{}
	for _, r := range trials {
		got[r.Condition] = []string{r.Verdict, r.Unreached}
	}
	return got
}
