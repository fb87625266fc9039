package model

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/crashwall/chaos/record"
)

// TestCodex runs Codex itself (the @openai/codex npm package, its Linux binary) as the
// agent of examples/support-ticket-codex.yaml, offline: its model is the stand-in, given
// as a model provider in the config.toml of a Codex home of its own (as a Codex user
// names any Responses API endpoint), and the stand-in plays a blind agent. Codex lists
// the wall's tools in the Responses API namespace mcp__chaos; the stand-in answers with
// the tool and its namespace, as the Responses API does (proxies/llm/standin_namespace.go).
//
//   - as documented (-c {codex_config}): every scripted call reaches the wall; clean is
//     correct, phantom_success on update_ticket is silent_wrong, exit 0;
//   - with its tools blocked (the wall's server without the approval, so codex exec,
//     whose approval policy is never, refuses every call: "MCP tool call requires
//     approval"): no_verdict (tools_refused) with what to change, no rate, exit 4.
func TestCodex(t *testing.T) {
	codex, standin, runs := clientRuns(t, "codex", "codex.script.yaml", "support-ticket-codex.yaml")
	// The example as a user would run it, with codex from tests/js, a home of its own
	// whose config.toml names the stand-in as the model provider.
	spec := func(name string, more ...string) string {
		home := runs.home(t, name)
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
		return runs.spec(t, name, append([]string{
			"command: codex ", "command: " + codex + " ",
			"faults: [all]", "faults: [phantom_success]",
			"  profile: codex\n", "  profile: codex\n  env: {HOME: " + home + ", CODEX_HOME: " + codexHome + ", STANDIN_API_KEY: standin}\n",
		}, more...)...)
	}

	t.Run("as documented", func(t *testing.T) {
		out, _ := runs.wantBlind(t, spec("allowed"))
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
		// The wall's server as given, its tools back to asking for an approval.
		runs.wantUnscored(t, spec("blocked", "-c {codex_config} {task}", `-c {codex_config} -c 'mcp_servers.chaos.default_tools_approval_mode="prompt"' {task}`),
			"tools_refused",
			"tools_refused: the agent refused or could not run the wall's tools (chaos.read_email, chaos.update_ticket): For Codex give the wall with -c {codex_config}",
			"main                 0/0 = n/a")
	})
}
