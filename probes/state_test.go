package probes

import (
	"testing"

	"github.com/crashwall/chaos/spec"
)

func TestStateCheck(t *testing.T) {
	state := map[string]any{
		"priority": "normal",
		"count":    1,
		"ratio":    1.5,
		"float1":   1.0,
		"text1":    "1",
		"tags":     []any{"vip", "eu", 42.0},
		"address":  map[string]any{"city": "Paris", "zip": 75001},
		"empty":    "",
		"nothing":  nil,
		"flag":     true,
	}
	tests := []struct {
		name      string
		check     spec.StateCheck
		ok        bool
		detail    string
		noVerdict bool
	}{
		{"equals string", spec.StateCheck{Key: "priority", Op: "equals", Equals: "normal"}, true, `priority = "normal"`, false},
		{"equals mismatch", spec.StateCheck{Key: "priority", Op: "equals", Equals: "urgent"}, false, `priority = "normal", want "urgent"`, false},
		{"int equals float", spec.StateCheck{Key: "count", Op: "equals", Equals: 1.0}, true, `count = 1`, false},
		{"float equals int", spec.StateCheck{Key: "float1", Op: "equals", Equals: 1}, true, `float1 = 1`, false},
		{"string is not a number", spec.StateCheck{Key: "text1", Op: "equals", Equals: 1}, false, `text1 = "1", want 1`, false},
		{"number is not a string", spec.StateCheck{Key: "count", Op: "equals", Equals: "1"}, false, `count = 1, want "1"`, false},
		{"equals object", spec.StateCheck{Key: "address", Op: "equals", Equals: map[string]any{"zip": 75001.0, "city": "Paris"}}, true, `address = {"city":"Paris","zip":75001}`, false},
		{"equals bool", spec.StateCheck{Key: "flag", Op: "equals", Equals: true}, true, `flag = true`, false},
		{"equals on absent key", spec.StateCheck{Key: "missing", Op: "equals", Equals: "x"}, false, `missing is absent, want "x"`, false},
		{"equals null", spec.StateCheck{Key: "nothing", Op: "equals", Equals: nil}, true, `nothing = null`, false},
		{"not_equals ok", spec.StateCheck{Key: "priority", Op: "not_equals", NotEquals: "low"}, true, `priority = "normal" (not "low")`, false},
		{"not_equals fails", spec.StateCheck{Key: "priority", Op: "not_equals", NotEquals: "normal"}, false, `priority = "normal", want anything but "normal"`, false},
		{"not_equals on absent key", spec.StateCheck{Key: "missing", Op: "not_equals", NotEquals: "low"}, true, `missing is absent (not "low")`, false},
		{"contains substring", spec.StateCheck{Key: "priority", Op: "contains", Contains: "orm"}, true, `priority = "normal" (contains "orm")`, false},
		{"contains missing substring", spec.StateCheck{Key: "priority", Op: "contains", Contains: "urg"}, false, `priority = "normal", want it to contain "urg"`, false},
		{"contains list element", spec.StateCheck{Key: "tags", Op: "contains", Contains: "vip"}, true, "", false},
		{"list element is whole, not a substring", spec.StateCheck{Key: "tags", Op: "contains", Contains: "vi"}, false, "", false},
		{"contains number element", spec.StateCheck{Key: "tags", Op: "contains", Contains: "42"}, true, "", false},
		{"contains on a number", spec.StateCheck{Key: "count", Op: "contains", Contains: "1"}, false, "", false},
		{"contains on absent", spec.StateCheck{Key: "missing", Op: "contains", Contains: "x"}, false, `missing is absent, want it to contain "x"`, false},
		{"matches", spec.StateCheck{Key: "priority", Op: "matches", Matches: "^(normal|low)$"}, true, `priority = "normal" (matches "^(normal|low)$")`, false},
		{"matches fails", spec.StateCheck{Key: "priority", Op: "matches", Matches: "^urgent$"}, false, `priority = "normal", want it to match "^urgent$"`, false},
		{"matches a number's text", spec.StateCheck{Key: "ratio", Op: "matches", Matches: `^1\.5$`}, true, "", false},
		{"matches on an empty string", spec.StateCheck{Key: "empty", Op: "matches", Matches: "."}, false, "", false},
		{"matches on null", spec.StateCheck{Key: "nothing", Op: "matches", Matches: ".*"}, false, "", false},
		{"bad pattern", spec.StateCheck{Key: "priority", Op: "matches", Matches: "("}, false, "", true},
		{"absent ok", spec.StateCheck{Key: "missing", Op: "absent", Absent: true}, true, `missing is absent`, false},
		{"absent fails", spec.StateCheck{Key: "priority", Op: "absent", Absent: true}, false, `priority = "normal", want it absent`, false},
		{"null is present", spec.StateCheck{Key: "nothing", Op: "absent", Absent: true}, false, "", false},
		{"op inferred", spec.StateCheck{Key: "priority", Equals: "normal"}, true, "", false},
		{"op inferred absent", spec.StateCheck{Key: "missing", Absent: true}, true, "", false},
		{"unknown op", spec.StateCheck{Key: "priority", Op: "greater_than"}, false, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := StateCheck(state, tt.check)
			if (got.NoVerdict != "") != tt.noVerdict {
				t.Fatalf("NoVerdict = %q, want set: %v", got.NoVerdict, tt.noVerdict)
			}
			if tt.noVerdict {
				return
			}
			if got.OK != tt.ok {
				t.Errorf("OK = %v, want %v (%s)", got.OK, tt.ok, got.Detail)
			}
			if tt.detail != "" && got.Detail != tt.detail {
				t.Errorf("Detail = %s, want %s", got.Detail, tt.detail)
			}
		})
	}
}

func TestSameValueKeepsLargeIntegersApart(t *testing.T) {
	if sameValue(int64(9007199254740993), int64(9007199254740992)) {
		t.Error("two integers past float64 precision compared equal")
	}
	if !sameValue(int64(9007199254740993), uint64(9007199254740993)) {
		t.Error("the same integer in two Go types compared unequal")
	}
}
