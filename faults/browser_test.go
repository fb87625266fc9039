package faults

import (
	"strings"
	"testing"

	"github.com/crashwall/chaos/spec"
)

const browserCondSpec = `
name: browser-units
task: save two records
agent:
  command: "true"
browser:
  intercept: ["http://127.0.0.1:*/api/*"]
  faults: [phantom_success]
conditions:
  - {id: second-lost, family: phantom_success, tool: browser, at: 2}
  - {id: third-down, family: transient_error, tool: browser, at: 3}
`

// TestBrowserConditionByHand: a condition written by hand on the browser's writes hits
// the at-th write only, beside the generated one on the 1st.
func TestBrowserConditionByHand(t *testing.T) {
	s, err := spec.Parse("b.yaml", []byte(browserCondSpec))
	if err != nil {
		t.Fatal(err)
	}
	conds, err := Generate(s)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]bool{ // fires on writes 1, 2, 3
		"phantom_success@browser": {true, false, false},
		"second-lost":             {false, true, false},
		"third-down":              {false, false, true},
	}
	for id, fires := range want {
		c, ok := Find(conds, id)
		if !ok {
			t.Fatalf("no condition %q in %v", id, IDs(conds))
		}
		if c.Tool != spec.BrowserTool || !c.SuccessPossible || !strings.Contains(c.What, "write the page sends") {
			t.Errorf("%s: %+v", id, c)
		}
		for i, f := range fires {
			pos := Position{Tool: spec.BrowserTool, Write: true, Call: i + 1, Target: i + 1, SinceWrite: i + 1}
			if got := Decide(1, c, pos); got != f {
				t.Errorf("%s on write %d: fired %v, want %v", id, i+1, got, f)
			}
		}
	}
	for _, bad := range []string{
		"{id: x, family: permanent_error, tool: browser}",
		"{id: x, family: phantom_success, tool: browser, reply: nope}",
	} {
		s, err := spec.Parse("b.yaml", []byte(strings.Replace(browserCondSpec, "{id: second-lost, family: phantom_success, tool: browser, at: 2}", bad, 1)))
		if err == nil {
			_, err = Generate(s)
		}
		if err == nil || !strings.Contains(err.Error(), "browser") {
			t.Errorf("%s: error %v, want one about the browser wall", bad, err)
		}
	}
}
