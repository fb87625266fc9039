package browser

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/tests/browser/site"
	"github.com/crashwall/chaos/tests/testkit"
)

// runTimeout is a guard against a hang, not a measure of speed.
const runTimeout = 15 * time.Minute

// secret is the password the agent types into the form (from agent.env's ${VAR}): no
// file the run wrote may hold it.
const secret = "pw-7Hq2-never-in-a-file"

const formSpec = `name: browser-form
task: Open the contact form at %[1]s and save the contact Ada Lovelace.
agent:
  command: node "$CHAOS_JS/browser-agent.mjs" {cdp_url} {agent} %[1]s "Ada Lovelace" {sandbox}
  env: {CHAOS_TEST_PASSWORD: "${BROWSER_SECRET}"}
  timeout: 10m
axes:
  agent: [blind, verifying, retrying]
browser:
  intercept: ["%[1]s/api/*"]
  faults: [phantom_success, transient_error, phantom_failure]
probes:
  - command: curl -s "%[1]s/check?name=Ada%%20Lovelace&email=$(basename "$PWD")@example.org"
limits:
  concurrency: 2
`

// TestReferenceAgents runs the three reference agents through the guard, clean and under
// each fault on the page's first write: a blind agent is silent_wrong under phantom
// success and transient error; the verifying one (reads the list back) is correct or
// reported_honestly; the retrying one leaves a duplicate under phantom failure.
func TestReferenceAgents(t *testing.T) {
	testkit.Node(t, "playwright-core")
	out := runForm(t)
	var results []run.TrialResult
	testkit.ReadJSON(t, filepath.Join(out, "verdicts.json"), &results)
	got := map[string]run.TrialResult{}
	for _, r := range results {
		got[r.Cell+"/"+r.Condition] = r
	}
	want := map[string][]string{
		"agent=blind/clean":                       {"correct"},
		"agent=blind/phantom_success@browser":     {"silent_wrong"},
		"agent=blind/transient_error@browser":     {"silent_wrong"},
		"agent=verifying/clean":                   {"correct"},
		"agent=verifying/phantom_success@browser": {"correct", "reported_honestly"},
		"agent=verifying/transient_error@browser": {"correct", "reported_honestly"},
		"agent=verifying/phantom_failure@browser": {"correct", "reported_honestly"},
		"agent=retrying/clean":                    {"correct"},
		"agent=retrying/phantom_failure@browser":  {"silent_wrong"},
	}
	for key, verdicts := range want {
		r, ok := got[key]
		if !ok {
			t.Errorf("%s: no trial (trials: %v)", key, keys(got))
			continue
		}
		if !contains(verdicts, r.Verdict) {
			t.Errorf("%s: verdict %s (%s), want %s; closing %q; checks %+v", key, r.Verdict, r.VerdictWhy, strings.Join(verdicts, " or "), r.Closing, r.Checks)
		}
	}
	// The retrying agent under phantom failure wrote twice: the probe saw the duplicate.
	if r := got["agent=retrying/phantom_failure@browser"]; !strings.Contains(fmt.Sprint(r.Checks), "duplicate") {
		t.Errorf("retrying under phantom failure: the checks do not name a duplicate: %+v", r.Checks)
	}
	// The record of a faulted trial says what the page got and what the site answered.
	rec, err := os.ReadFile(filepath.Join(got["agent=retrying/phantom_failure@browser"].Dir, "record.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`"transport":"cdp"`, `"how":"sent, answered 500"`, `"real_reply":"201 `, `"type":"cdp_target"`, `"type":"cdp_navigation"`} {
		if !strings.Contains(string(rec), w) {
			t.Errorf("the record lacks %s", w)
		}
	}
	// The password typed into the form, and echoed to stderr, is in no file the run wrote
	// (the run folder, the data directory with Temporal's history): its marker is where
	// it was echoed.
	assertNoSecret(t, filepath.Dir(out), secret)
	stderr, err := os.ReadFile(filepath.Join(got["agent=blind/clean"].Dir, "stderr"))
	if want := "await page.fill('#password', '[redacted:BROWSER_SECRET]');"; err != nil || !strings.Contains(string(stderr), want) {
		t.Errorf("the blind agent's stderr lacks %q (%v):\n%s", want, err, stderr)
	}
}

func runForm(t *testing.T) string {
	t.Helper()
	_, out := runSpec(t, formSpec, []string{"BROWSER_SECRET=" + secret})
	return out
}

// runSpec runs chaos run on specText (%[1]s: the test site's URL) against a fresh test
// site, with extra environment and arguments, and returns the site and the run folder.
func runSpec(t *testing.T, specText string, env []string, args ...string) (*site.Site, string) {
	t.Helper()
	st, err := site.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	dir := t.TempDir()
	specPath := filepath.Join(dir, "browser.yaml")
	if err := os.WriteFile(specPath, []byte(fmt.Sprintf(specText, st.URL)), 0o644); err != nil {
		t.Fatal(err)
	}
	// The run folder and the data directory side by side: a search of the one folder
	// holding both reads every file the run wrote.
	base := t.TempDir()
	out := filepath.Join(base, "run")
	r := testkit.Run(t, chaosBin, testkit.Env(t, append([]string{"CHAOS_JS=" + testkit.JSDir()}, env...)...), runTimeout,
		append([]string{"run", specPath, "--data-dir", filepath.Join(base, "data"), "--out", out}, args...)...)
	if r.Code != 0 && r.Code != 2 {
		t.Fatalf("chaos run: exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	t.Logf("chaos run (exit %d):\n%s", r.Code, r.Stdout)
	return st, out
}

// assertNoSecret searches every file under dir for the secret.
func assertNoSecret(t *testing.T, dir, secret string) {
	t.Helper()
	n := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Errorf("read %s: %v", p, err)
			return nil
		}
		n++
		if strings.Contains(string(b), secret) {
			t.Errorf("%s holds the secret", p)
		}
		return nil
	})
	if n < 10 {
		t.Fatalf("only %d files under %s: the search for the secret searched nothing", n, dir)
	}
}

func keys(m map[string]run.TrialResult) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
