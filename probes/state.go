package probes

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/crashwall/chaos/spec"
)

// Result is the outcome of one world probe.
type Result struct {
	// OK: the world is as the check wants it.
	OK bool `json:"ok"`
	// Detail says what was seen, for the report: `priority = "normal", want "urgent"`.
	Detail string `json:"detail"`
	// NoVerdict, when set, is why the probe could not run; OK and Detail mean nothing then.
	NoVerdict string `json:"no_verdict,omitempty"`
}

func noVerdict(format string, args ...any) Result {
	return Result{NoVerdict: fmt.Sprintf(format, args...)}
}

// StateCheck checks the value stored under c.Key in the final state. Values compare
// as JSON does (1 == 1.0, "1" != 1). A check built by hand without Op is read from the
// comparison that is set.
func StateCheck(state map[string]any, c spec.StateCheck) Result {
	v, present := state[c.Key]
	seen := c.Key + " = " + show(v)
	if !present {
		seen = c.Key + " is absent"
	}
	switch op := stateOp(c); op {
	case "equals":
		if present && sameValue(v, c.Equals) {
			return Result{OK: true, Detail: seen}
		}
		return Result{Detail: fmt.Sprintf("%s, want %s", seen, show(c.Equals))}
	case "not_equals":
		if present && sameValue(v, c.NotEquals) {
			return Result{Detail: fmt.Sprintf("%s, want anything but %s", seen, show(c.NotEquals))}
		}
		return Result{OK: true, Detail: fmt.Sprintf("%s (not %s)", seen, show(c.NotEquals))}
	case "contains":
		want := fmt.Sprintf("%s, want it to contain %q", seen, c.Contains)
		if !present {
			return Result{Detail: want}
		}
		if contains(v, c.Contains) {
			return Result{OK: true, Detail: fmt.Sprintf("%s (contains %q)", seen, c.Contains)}
		}
		return Result{Detail: want}
	case "matches":
		re, err := regexp.Compile(c.Matches)
		if err != nil {
			return noVerdict("state check on %s: bad pattern %q: %v", c.Key, c.Matches, err)
		}
		s, ok := scalarText(v)
		if present && ok && re.MatchString(s) {
			return Result{OK: true, Detail: fmt.Sprintf("%s (matches %q)", seen, c.Matches)}
		}
		return Result{Detail: fmt.Sprintf("%s, want it to match %q", seen, c.Matches)}
	case "absent":
		if !present {
			return Result{OK: true, Detail: seen}
		}
		return Result{Detail: seen + ", want it absent"}
	default:
		return noVerdict("state check on %s: unknown comparison %q (known: equals, not_equals, contains, matches, absent)", c.Key, op)
	}
}

func stateOp(c spec.StateCheck) string {
	switch {
	case c.Op != "":
		return c.Op
	case c.Absent:
		return "absent"
	case c.Matches != "":
		return "matches"
	case c.Contains != "":
		return "contains"
	case c.NotEquals != nil:
		return "not_equals"
	}
	return "equals"
}

// contains is a substring of a string value, or an element of a list. The spec writes
// the wanted element as text, so a list element 42 is found by "42".
func contains(v any, want string) bool {
	n, err := normalize(v)
	if err != nil {
		return false
	}
	switch x := n.(type) {
	case string:
		return strings.Contains(x, want)
	case []any:
		for _, e := range x {
			if s, ok := e.(string); ok && s == want {
				return true
			}
			if _, isString := e.(string); !isString && show(e) == want {
				return true
			}
		}
	}
	return false
}

// scalarText is the text a pattern is matched against: a string as it is, a number or
// a boolean as JSON writes it. Lists, objects and null have none.
func scalarText(v any) (string, bool) {
	n, err := normalize(v)
	if err != nil {
		return "", false
	}
	switch x := n.(type) {
	case string:
		return x, true
	case nil, map[string]any, []any:
		return "", false
	default:
		return show(x), true
	}
}
