package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFaultsNotApplicableReason: the line "Not applicable to this spec" gives the reason
// that really removed each family. On the example (a tool that writes), fault_set:
// ajantik removes phantom_failure because it is chaos's own family, not for want of a
// tool that writes; a faults: list removes the families it does not name.
func TestFaultsNotApplicableReason(t *testing.T) {
	base, err := os.ReadFile(exampleSpec)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, edit  string
		want, wrong []string
	}{
		{
			name: "fault_set ajantik",
			edit: strings.Replace(string(base), "faults: [all]", "faults: [all]\nfault_set: ajantik", 1),
			want: []string{
				"phantom_failure (chaos's own family, left out by fault_set: ajantik)",
				"empty_success (chaos's own family, left out by fault_set: ajantik)",
			},
			wrong: []string{"phantom_failure (needs tools that write)"},
		},
		{
			name:  "faults list",
			edit:  strings.Replace(string(base), "faults: [all]", "faults: [phantom_success]", 1),
			want:  []string{"phantom_failure (not asked for: faults: [phantom_success])"},
			wrong: []string{"(needs tools that write)"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.edit == string(base) {
				t.Fatalf("the example spec no longer has \"faults: [all]\" to edit")
			}
			path := filepath.Join(t.TempDir(), "spec.yaml")
			if err := os.WriteFile(path, []byte(tc.edit), 0o644); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := faultsRun(&FaultsOptions{IO: &IOStreams{Out: &out, ErrOut: &out}, Spec: path}); err != nil {
				t.Fatal(err)
			}
			var line string
			for _, l := range strings.Split(out.String(), "\n") {
				if strings.HasPrefix(l, "Not applicable to this spec:") {
					line = l
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("want %q in\n%s", w, line)
				}
			}
			for _, w := range tc.wrong {
				if strings.Contains(line, w) {
					t.Errorf("untrue reason %q in\n%s", w, line)
				}
			}
		})
	}
}
