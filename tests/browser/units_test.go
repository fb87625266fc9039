package browser

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/tests/testkit"
)

// unitsSpec: two records saved through the page, each a unit with its own probe of the
// site; the hand-written condition loses the second record's write (the page's 2nd write).
const unitsSpec = `name: browser-units
task: Save the contacts R-101 and R-102 with the form at %[1]s.
units: [R-101, R-102]
agent:
  command: node "$CHAOS_JS/browser-records-agent.mjs" {cdp_url} {agent} %[1]s {sandbox} R-101 R-102
  timeout: 10m
axes:
  agent: [blind, verifying]
browser:
  intercept: ["%[1]s/api/*"]
  faults: [phantom_success]
conditions:
  - {id: second-lost, family: phantom_success, tool: browser, at: 2}
probes:
  - command: curl -s "%[1]s/check?name=R-101&email=$(basename "$PWD")@example.org"
  - command: curl -s "%[1]s/check?name=R-102&email=$(basename "$PWD")@example.org"
limits:
  concurrency: 2
`

// TestBrowserUnits judges the browser wall's trials per unit under chaos run: each unit's
// world from its probe of the site, its claim from its line in the closing message. The
// phantom success on the page's 2nd write (R-102's save) makes the blind agent's R-102
// silent_wrong and its R-101 correct, rolled up to silent_wrong; the verifying agent,
// which reads the list back and saves R-102 again, is correct on both.
func TestBrowserUnits(t *testing.T) {
	testkit.Node(t, "playwright-core")
	st, out := runSpec(t, unitsSpec, nil, "--only", "clean,second-lost")
	var results []run.TrialResult
	testkit.ReadJSON(t, filepath.Join(out, "verdicts.json"), &results)
	got := map[string]run.TrialResult{}
	for _, r := range results {
		got[r.Cell+"/"+r.Condition] = r
	}
	want := map[string][3]string{ // the trial
		"agent=blind/clean":           {"correct", "correct", "correct"},
		"agent=blind/second-lost":     {"correct", "silent_wrong", "silent_wrong"},
		"agent=verifying/clean":       {"correct", "correct", "correct"},
		"agent=verifying/second-lost": {"correct", "correct", "correct"},
	}
	if len(results) != len(want) {
		t.Errorf("%d trials (%v), want %d", len(results), keys(got), len(want))
	}
	for key, w := range want {
		r, ok := got[key]
		if !ok {
			t.Errorf("%s: no trial (trials: %v)", key, keys(got))
			continue
		}
		if len(r.Units) != 2 || r.Units[0].Unit != "R-101" || r.Units[1].Unit != "R-102" {
			t.Errorf("%s: units %+v, want R-101 and R-102 (%s)", key, r.Units, r.VerdictWhy)
			continue
		}
		gotV := [3]string{r.Units[0].Verdict, r.Units[1].Verdict, r.Verdict}
		if gotV != w {
			t.Errorf("%s: verdicts R-101 %s, R-102 %s, trial %s; want %v (%s); closing %q; units %+v", key, gotV[0], gotV[1], gotV[2], w, r.VerdictWhy, r.Closing, r.Units)
		}
		for i, u := range r.Units {
			// Each unit's world is its own probe: the one that names it, not the other's.
			if len(u.Checks) != 1 || !strings.Contains(u.Checks[0].Check, "name="+u.Unit+"&") {
				t.Errorf("%s: unit %d's checks %+v, want its own probe", key, i, u.Checks)
			}
		}
		if strings.HasSuffix(key, "second-lost") && r.Fired == 0 {
			t.Errorf("%s: the fault never fired (%s)", key, r.VerdictWhy)
		}
	}
	// The site itself: the blind agent's R-102 under the fault never reached it.
	n := 0
	for _, rec := range st.Records() {
		if rec.Name == "R-102" {
			n++
		}
	}
	if n != 3 { // blind clean, verifying clean, verifying second-lost (its second save)
		t.Errorf("the site holds %d R-102 records, want 3: %+v", n, st.Records())
	}
}
