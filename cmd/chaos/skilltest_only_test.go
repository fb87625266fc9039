package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashwall/chaos/skilltest"
)

// TestSkillTestSpecRunsThePlan: the spec chaos skill test writes names its planned
// conditions (only:), so chaos run of it plans exactly those, not every condition its
// fault families generate; --only still overrides it.
func TestSkillTestSpecRunsThePlan(t *testing.T) {
	inferred, err := os.ReadFile(exampleSpec)
	if err != nil {
		t.Fatal(err)
	}
	plan := skilltest.Plan{Conditions: []skilltest.Planned{
		{ID: "phantom_success@update_ticket", Family: "phantom_success", Tool: "update_ticket"},
		{ID: "transient_error@get_ticket_field", Family: "transient_error", Tool: "get_ticket_field"},
	}}
	text, err := skilltest.Spec(string(inferred), skilltest.SpecOptions{Agent: skilltest.Agent{Claude: "claude"}, Plan: plan, Repeat: 2})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "spec.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	dry := func(args ...string) string {
		t.Helper()
		var out bytes.Buffer
		root := NewCmdRoot(&IOStreams{Out: &out, ErrOut: &out})
		root.SetArgs(append(append([]string{"run", path, "--dry-run", "--data-dir", t.TempDir()}, args...), "--", "true"))
		if err := root.Execute(); err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		return out.String()
	}
	if out := dry(); !strings.Contains(out, "plan 12 trials of support-ticket: 2 cells x 3 conditions x 2 replicates") {
		t.Errorf("chaos run of the skill test's spec, want the 3 planned conditions (clean and 2 faults) in 2 cells x 2:\n%s\nspec:\n%s", out, text)
	}
	if out := dry("--only", "clean"); !strings.Contains(out, "plan 4 trials of ") {
		t.Errorf("--only clean does not override the spec's only:\n%s", out)
	}
	// Without only:, the families generate more: the restriction is what keeps the plan.
	i := strings.Index(text, "# The conditions chaos skill test planned")
	if i < 0 {
		t.Fatalf("the written spec has no only:\n%s", text)
	}
	os.WriteFile(path, []byte(text[:i]), 0o644)
	if out := dry(); strings.Contains(out, "plan 12 trials of ") {
		t.Errorf("the families alone plan only the planned conditions; the test proves nothing:\n%s", out)
	}
}
