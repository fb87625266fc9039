package spec

import (
	"fmt"
	"strings"
	"testing"
)

// laughs is a "billion laughs": nine levels of anchors, each naming the one below nine
// times, so the last expands to 9^9 leaves. merge builds each level with merge keys (<<),
// else with lists; use is the YAML that refers to the last level, *i.
func laughs(merge bool, before, use string) string {
	var b strings.Builder
	b.WriteString(before)
	if merge {
		b.WriteString("x-a: &a {lol: lol}\n")
	} else {
		b.WriteString("x-a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	}
	for i := 1; i < 9; i++ {
		prev, cur := string(rune('a'+i-1)), string(rune('a'+i))
		refs := strings.TrimSuffix(strings.Repeat("*"+prev+", ", 9), ", ")
		if merge {
			fmt.Fprintf(&b, "x-%s: &%s {<<: [%s]}\n", cur, cur, refs)
		} else {
			fmt.Fprintf(&b, "x-%s: &%s [%s]\n", cur, cur, refs)
		}
	}
	return b.String() + use
}

// TestParseAliasBomb: a file whose aliases expand past the budget is refused with that
// one problem and no other: the walk stopped short, so what it did not reach (task,
// tools, ...) must not be reported as missing.
func TestParseAliasBomb(t *testing.T) {
	const refusal = "the spec is too large once its aliases are expanded"
	tests := []struct {
		name, yaml string
	}{
		{"merged into the top mapping, before the rest", laughs(true, "", "<<: *i\n") + base},
		{"merged into the top mapping, after the rest", laughs(true, base, "<<: *i\n")},
		{"as initial_state", laughs(true, base, "initial_state: *i\n")},
		{"a list as a tool's reply", laughs(false, "", "") + strings.Replace(base, "tools:\n", "tools:\n  - {name: bomb, reply: *i}\n", 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("spec.yaml", []byte(tt.yaml))
			if err == nil {
				t.Fatal("the bomb loaded")
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "spec.yaml:") || !strings.HasSuffix(lines[0], ": "+refusal) {
				t.Errorf("got\n%s\nwant the one line spec.yaml:N: %s", err, refusal)
			}
		})
	}
}
