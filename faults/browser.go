package faults

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/crashwall/chaos/spec"
)

// The browser wall's conditions: one per family the spec's browser section asks for, on
// the pseudo-tool spec.BrowserTool, whose n-th call is the page's n-th write to an
// intercepted URL. The wall (proxies/cdpwall) decides with Decide like any transport and
// applies the family in the browser's own terms (docs/faults.md#the-browser-wall), which
// the family gives as a BrowserFault.

// BrowserFault is the capability of a family the browser wall injects into a page's
// writes.
type BrowserFault interface {
	// DescribeBrowser fills in What and SuccessPossible of a condition on the page's
	// writes, and says what the page receives.
	DescribeBrowser(c *Condition) Info
	// BrowserAnswer is what the wall does with a write the fault hit.
	BrowserAnswer(c Condition) BrowserAnswer
}

// BrowserAnswer is what the browser wall does with a page's write a fault hit.
type BrowserAnswer struct {
	// Send says the request reaches the site, and the site's answer is replaced by
	// Status and Body; otherwise the page gets Status and Body and the site nothing.
	Send bool
	// Status and Body are the page's answer (a JSON body).
	Status int
	Body   string
	// How says, in words, what the fault did (the record's hit).
	How string
}

// Browser returns the browser capability of the family called name.
func Browser(name string) (BrowserFault, bool) {
	e, ok := Lookup(name)
	if !ok {
		return nil, false
	}
	b, ok := e.Family.(BrowserFault)
	return b, ok
}

// BrowserFamilies are the families the browser wall injects, in Rank order.
func BrowserFamilies() []string {
	var out []string
	for _, e := range Families() {
		if _, ok := e.Family.(BrowserFault); ok {
			out = append(out, e.Name)
		}
	}
	return out
}

// errorBody is the JSON body of an error answer to the page.
func errorBody(text string) string {
	b, _ := json.Marshal(map[string]string{"error": text})
	return string(b)
}

// browserWrite says which of the page's writes a condition hits.
func browserWrite(c Condition) string {
	return Nth(max(c.At, 1)) + " write the page sends to an intercepted URL"
}

// browserConditions are the conditions of the spec's browser section, in Rank order.
func browserConditions(s *spec.Spec) []Condition {
	if s.Browser == nil {
		return nil
	}
	var out []Condition
	for _, fam := range BrowserFamilies() {
		if !contains(s.Browser.BrowserFaults(), fam) {
			continue
		}
		c := Condition{ID: ID(fam, "", spec.BrowserTool, 0), Family: fam, Tool: spec.BrowserTool, At: 1}
		describeBrowser(&c)
		out = append(out, c)
	}
	return out
}

// describeBrowser fills in What and SuccessPossible of a browser condition and says what
// the page receives.
func describeBrowser(c *Condition) Info {
	if b, ok := Browser(c.Family); ok {
		return b.DescribeBrowser(c)
	}
	c.What = fmt.Sprintf("%s on the page's writes", c.Family)
	return Info{Hits: browserWrite(*c), Receives: "?", World: "?"}
}

// browserFromSpec is a condition written by hand on the browser's writes
// (`{family: phantom_success, tool: browser, at: 2}`): a family with a BrowserFault on
// the at-th write (every write from it on with every), its text the wall's own.
func browserFromSpec(cs spec.ConditionSpec, where string) (Condition, error) {
	if _, ok := Browser(cs.Family); !ok {
		return Condition{}, fmt.Errorf("%s: condition %q: %s is not a fault of the browser wall (it has: %s)", where, cs.ID, cs.Family, strings.Join(BrowserFamilies(), ", "))
	}
	if cs.Variant != "" || cs.Reply != "" || cs.Message != "" || cs.After > 0 {
		return Condition{}, fmt.Errorf("%s: condition %q: a condition on the browser's writes takes id, family, tool, at, every, success_possible and description (not variant, reply, message or after): the wall answers in the browser's terms", where, cs.ID)
	}
	c := Condition{ID: cs.ID, Family: cs.Family, Tool: spec.BrowserTool, At: max(cs.At, 1), Every: cs.Every}
	if c.ID == "" {
		c.ID = ID(c.Family, "", c.Tool, c.At)
	}
	describeBrowser(&c)
	if cs.SuccessPossible != nil {
		c.SuccessPossible = *cs.SuccessPossible
	}
	if cs.Description != "" {
		c.What = cs.Description
	}
	return c, nil
}
