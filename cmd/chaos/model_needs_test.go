package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestModelFaultNeeds: chaos faults --model says beside each model fault which part of a
// turn it needs, and chaos run --dry-run says it beside the spec's model fault.
func TestModelFaultNeeds(t *testing.T) {
	var out bytes.Buffer
	root := NewCmdRoot(&IOStreams{Out: &out, ErrOut: &out})
	root.SetArgs([]string{"faults", "--model"})
	if err := root.Execute(); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"FAULT  NEEDS A TURN WITH", "llm_truncate_single  text ", "tool_error_single  tool calls ", "llm_error_single  any ", "fails the episode"} {
		if !strings.Contains(regexpSpaces(out.String()), want) {
			t.Errorf("chaos faults --model lacks %q:\n%s", want, out.String())
		}
	}

	b, err := os.ReadFile(exampleSpec)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "model.yaml")
	os.WriteFile(path, append(b, []byte("model:\n  upstream: http://127.0.0.1:9\n  fault: llm_truncate_single\n")...), 0o644)
	out.Reset()
	root = NewCmdRoot(&IOStreams{Out: &out, ErrOut: &out})
	root.SetArgs([]string{"run", path, "--dry-run", "--data-dir", t.TempDir(), "--", "true"})
	if err := root.Execute(); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if want := "llm_truncate_single at rate 1 at every position (the text cut to its first 30%, finish reason length; its tool calls dropped; needs a turn with text: fired on a turn without, it fails the episode)"; !strings.Contains(out.String(), want) {
		t.Errorf("the dry run lacks %q:\n%s", want, out.String())
	}
}

// regexpSpaces folds runs of spaces to two, as the table's columns are padded.
func regexpSpaces(s string) string {
	for strings.Contains(s, "   ") {
		s = strings.ReplaceAll(s, "   ", "  ")
	}
	return s
}
