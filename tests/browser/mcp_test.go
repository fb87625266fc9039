package browser

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/tests/browser/site"
	"github.com/crashwall/chaos/tests/testkit"
)

// mcpSpec: an agent on the OpenAI Agents SDK (tests/js/agents-sdk-agent.mjs) whose tools
// are Playwright's MCP server (@playwright/mcp) pointed at {cdp_url}, its model the
// stand-in behind the model proxy.
const mcpSpec = `name: browser-mcp
task: Open the contact form at %[1]s and save the contact Ada Lovelace.
agent:
  command: node "$CHAOS_JS/agents-sdk-agent.mjs" --llm-url {llm_url} --wall "node $CHAOS_PLAYWRIGHT_MCP --cdp-endpoint {cdp_url}" -- {task}
  env: {OPENAI_AGENTS_DISABLE_TRACING: "1"}
  timeout: 10m
model:
  upstream: ${CHAOS_STANDIN_URL}/v1
  fault: none
browser:
  intercept: ["%[1]s/api/*"]
  faults: [phantom_success]
probes:
  - command: curl -s "%[1]s/check?name=Ada%%20Lovelace&email=mcp@example.org"
`

// mcpScript is the stand-in model's script: open the form, fill it and save it (one
// browser_evaluate), then say it is done, whatever the page said.
const mcpScript = `- when: start
  tool: browser_navigate
  arguments: {url: "%[1]s/"}
- when: tool_result
  tool: browser_evaluate
  arguments:
    function: "async () => { document.getElementById('name').value = 'Ada Lovelace'; document.getElementById('email').value = 'mcp@example.org'; await saveRecord(); return document.getElementById('status').textContent; }"
- when: tool_result
  text: "Done: I saved the contact Ada Lovelace."
`

var standinLine = regexp.MustCompile(`(?ms)^stand-in model: (http://\S+)$.*^ready; Ctrl-C stops$`)

// TestPlaywrightMCP runs Playwright's MCP server from npm, pointed at {cdp_url}, driven by
// the Agents SDK against the stand-in: clean is correct and phantom success silent_wrong,
// the verdicts of the blind reference agent (the script trusts the page).
func TestPlaywrightMCP(t *testing.T) {
	// CHAOS_PLAYWRIGHT_MCP names another install of @playwright/mcp's cli.js (one not yet
	// in tests/js/node_modules); without it the package must be installed there.
	cli := os.Getenv("CHAOS_PLAYWRIGHT_MCP")
	if cli == "" {
		testkit.Node(t, "@openai/agents", "@playwright/mcp")
		cli = filepath.Join(testkit.JSDir(), "node_modules", "@playwright", "mcp", "cli.js")
	} else {
		testkit.Node(t, "@openai/agents")
	}
	for cond, want := range map[string]string{"clean": "correct", "phantom_success@browser": "silent_wrong"} {
		t.Run(cond, func(t *testing.T) {
			st, err := site.Start()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			dir := t.TempDir()
			script := filepath.Join(dir, "script.yaml")
			specPath := filepath.Join(dir, "browser-mcp.yaml")
			os.WriteFile(script, []byte(fmt.Sprintf(mcpScript, st.URL)), 0o644)
			os.WriteFile(specPath, []byte(fmt.Sprintf(mcpSpec, st.URL)), 0o644)
			p := testkit.Start(t, chaosBin, nil, "model", "standin", "--script", script, "--listen", "127.0.0.1:0")
			standin := p.WaitStdout(t, standinLine, testkit.StartTimeout)[1]
			env := testkit.Env(t, "CHAOS_JS="+testkit.JSDir(), "CHAOS_PLAYWRIGHT_MCP="+cli, "CHAOS_STANDIN_URL="+standin, "OPENAI_AGENTS_DISABLE_TRACING=1")
			out := filepath.Join(t.TempDir(), "run")
			r := testkit.Run(t, chaosBin, env, runTimeout, "run", specPath, "--only", cond, "--data-dir", t.TempDir(), "--out", out)
			t.Logf("chaos run (exit %d):\n%s\n%s", r.Code, r.Stdout, r.Stderr)
			var results []run.TrialResult
			testkit.ReadJSON(t, filepath.Join(out, "verdicts.json"), &results)
			if len(results) != 1 || results[0].Verdict != want {
				stderr, _ := os.ReadFile(filepath.Join(out, "trials", "main", cond, "1", "stderr"))
				t.Fatalf("verdicts %+v, want one %s\nthe agent's stderr:\n%s", results, want, stderr)
			}
			if n := len(st.Records()); (want == "correct") != (n == 1) {
				t.Errorf("the site holds %d records", n)
			}
		})
	}
}
