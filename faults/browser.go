package faults

import (
	"fmt"
	"slices"
	"strings"

	"github.com/crashwall/chaos/spec"
)

// The browser wall's conditions: one per family the spec's browser section asks for, on
// the pseudo-tool spec.BrowserTool, whose n-th call is the page's n-th write to an
// intercepted URL. The wall (proxies/cdpwall) decides with Decide like any transport and
// applies the family in the browser's own terms (docs/faults.md#the-browser-wall).

// browserConditions are the conditions of the spec's browser section, in
// spec.BrowserFamilies order.
func browserConditions(s *spec.Spec) []Condition {
	if s.Browser == nil {
		return nil
	}
	var out []Condition
	for _, fam := range spec.BrowserFamilies {
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
	w := Nth(max(c.At, 1)) + " write the page sends to an intercepted URL"
	switch c.Family {
	case "phantom_success":
		c.SuccessPossible = true
		c.What = w + ": answered 200 {} , not sent to the site"
		return Info{Hits: w, Receives: "200 with the body {}", World: "unchanged: the write never reaches the site"}
	case "phantom_failure":
		c.SuccessPossible = true
		c.What = w + ": sent to the site, answered 500 to the page"
		return Info{Hits: w, Receives: "500 with an error body; the site's real answer is recorded", World: "changes as asked: a retry writes twice"}
	case "transient_error":
		c.SuccessPossible = true
		c.What = w + ": answered 503, not sent to the site"
		return Info{Hits: w, Receives: "503 " + TextUnavailable, World: "unchanged by the failed write; a retry goes through"}
	case "session_drop":
		c.SuccessPossible = false
		from := Nth(dropFrom(*c)) + " write the page sends to an intercepted URL"
		c.What = "every request to an intercepted URL from the " + from + " on: 401, the session is gone"
		return Info{Hits: "every request to an intercepted URL from the " + from + " on", Receives: "401 " + TextSessionEnded, World: "keeps what was written before the drop, nothing after"}
	}
	c.What = fmt.Sprintf("%s on the page's writes", c.Family)
	return Info{Hits: w, Receives: "?", World: "?"}
}

// browserFromSpec is a condition written by hand on the browser's writes
// (`{family: phantom_success, tool: browser, at: 2}`): a family of spec.BrowserFamilies on
// the at-th write (every write from it on with every), its text the wall's own.
func browserFromSpec(cs spec.ConditionSpec, where string) (Condition, error) {
	if !slices.Contains(spec.BrowserFamilies, cs.Family) {
		return Condition{}, fmt.Errorf("%s: condition %q: %s is not a fault of the browser wall (it has: %s)", where, cs.ID, cs.Family, strings.Join(spec.BrowserFamilies, ", "))
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
