package hostile_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/tests/browser/site"
	"github.com/crashwall/chaos/tests/testkit"
)

// TestHostileCDPEnvelopes (issue 28 item 6): a browser agent in a real run tries to get
// a denied method and a denied click past the guard in every envelope CDP has
// (Target.sendMessageToTarget, one and two deep, on a session of its own), opens the two
// ways past the guard (Target.exposeDevToolsProtocol, Target.openDevTools), and clicks the
// denied element as Playwright does: each is denied, naming the rule, and the click fails
// at once with the denial, not Playwright's timeout. Nothing reached the site.
func TestHostileCDPEnvelopes(t *testing.T) {
	t.Parallel()
	node := testkit.Node(t, "playwright-core")
	st, err := site.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	w := newWorld(t)
	script, _ := os.ReadFile(filepath.Join("testdata", "cdp-envelopes.mjs"))
	os.WriteFile(filepath.Join(w.specDir, "agent.mjs"), script, 0o644)
	yaml := "name: hostile-cdp\ntask: look around\nagent:\n  command: " + yamlQuote(node+" agent.mjs "+testkit.JSDir()+" {cdp_url} "+st.URL) +
		"\n  timeout: 5m\nworkspace: {files: [agent.mjs]}\nbrowser:\n  intercept: [\"" + st.URL + "/api/*\"]\n" +
		"  deny_methods: [Page.printToPDF]\n  deny_clicks: [\"Delete*\"]\n"
	path := filepath.Join(w.specDir, "hostile.yaml")
	os.WriteFile(path, []byte(yaml), 0o644)
	out := filepath.Join(w.tmp, "run")
	r := testkit.Run(t, chaosBin, w.env, 10*time.Minute, "run", path, "--only", "clean", "--out", out)
	stdouts, _ := filepath.Glob(filepath.Join(out, "trials", "*", "clean", "1", "stdout"))
	if len(stdouts) != 1 {
		t.Fatalf("trial stdout files %v; want one\nexit %d\nstdout:\n%s\nstderr:\n%s", stdouts, r.Code, r.Stdout, r.Stderr)
	}
	b, _ := os.ReadFile(stdouts[0])
	_, line, ok := strings.Cut(string(b), "RESULTS ")
	stderr, _ := os.ReadFile(filepath.Join(filepath.Dir(stdouts[0]), "stderr"))
	if !ok {
		t.Fatalf("the agent printed no results\nstdout:\n%s\nstderr:\n%s", b, stderr)
	}
	var got map[string]string
	if err := json.Unmarshal([]byte(strings.TrimSpace(line)), &got); err != nil {
		t.Fatalf("results %q: %v", line, err)
	}
	t.Logf("the agent got: %v", got)
	for name, want := range map[string]string{
		"printToPDF":                           "chaos: denied method Page.printToPDF (browser.deny_methods: Page.printToPDF)",
		"printToPDF in sendMessageToTarget":    "chaos: denied method Page.printToPDF (browser.deny_methods: Page.printToPDF) (carried in Target.sendMessageToTarget)",
		"printToPDF two envelopes deep":        "(carried in Target.sendMessageToTarget) (carried in Target.sendMessageToTarget)",
		"click in sendMessageToTarget":         `chaos: denied click on "Delete all" (browser.deny_clicks: Delete*) (carried in Target.sendMessageToTarget)`,
		"exposeDevToolsProtocol":               "chaos: Target.exposeDevToolsProtocol is refused",
		"openDevTools":                         "chaos: Target.openDevTools is refused",
		"playwright click":                     `chaos: denied click on "Delete all" (browser.deny_clicks: Delete*)`,
		"devtools page":                        "chaos: Page.navigate is refused: a DevTools page (devtools://) speaks CDP to the browser past the guard",
		"devtools page in sendMessageToTarget": "chaos: Page.navigate is refused: a DevTools page (devtools://) speaks CDP to the browser past the guard (carried in Target.sendMessageToTarget)",
	} {
		if !strings.Contains(got[name], want) {
			t.Errorf("%s: the agent got %q, want %q", name, got[name], want)
		}
	}
	if strings.Contains(got["playwright click"], "Timeout") {
		t.Errorf("Playwright's click waited out its timeout: %s", got["playwright click"])
	}
	if st.Resets() != 0 {
		t.Errorf("the denied click reached the site (%d resets)", st.Resets())
	}
	w.check(t)
}
