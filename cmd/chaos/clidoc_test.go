package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIDoc: docs/cli.md's reference is what the commands say of themselves; `go generate
// ./cmd/chaos` (this test with -update) rewrites it, keeping the hand-written part above
// the marker.
func TestCLIDoc(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "cli.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	intro, old, found := strings.Cut(string(b), cliDocMarker)
	if !found && !*update {
		t.Fatalf("%s has no marker line %q (run go generate ./cmd/chaos)", path, strings.TrimSpace(cliDocMarker))
	}
	got, err := cliReference(NewCmdRoot(&IOStreams{}))
	if err != nil {
		t.Fatal(err)
	}
	overview, err := cliOverview(NewCmdRoot(&IOStreams{}))
	if err != nil {
		t.Fatal(err)
	}
	// The intro holds the overview between its markers.
	before, rest, ok1 := strings.Cut(intro, overviewStart)
	oldOverview, after, ok2 := strings.Cut(rest, overviewEnd)
	if !ok1 || !ok2 {
		t.Fatalf("%s has no overview between %q and %q", path, strings.TrimSpace(overviewStart), strings.TrimSpace(overviewEnd))
	}
	if *update {
		intro = before + overviewStart + overview + overviewEnd + after
		if err := os.WriteFile(path, []byte(strings.TrimRight(intro, "\n")+"\n\n"+cliDocMarker+got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if old != got || oldOverview != overview {
		t.Errorf("%s is stale: run go generate ./cmd/chaos", path)
	}
	for _, cmd := range []string{"diff", "report", "judge", "mcp", "skill", "completion", "resume", "abort"} {
		if !strings.Contains(overview, "[`chaos "+cmd) {
			t.Errorf("the overview has no row for chaos %s", cmd)
		}
	}
	if strings.Contains(overview, "--only ID...") {
		t.Errorf("the overview writes --only ID..., where the flag takes commas or repeats")
	}
	for _, cmd := range []string{"demo", "diff", "judge", "report", "completion"} {
		if !strings.Contains(got, "\n## chaos "+cmd+"\n") {
			t.Errorf("the reference has no section for chaos %s", cmd)
		}
	}
}
