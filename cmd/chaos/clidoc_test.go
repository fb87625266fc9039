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
	if *update {
		if err := os.WriteFile(path, []byte(strings.TrimRight(intro, "\n")+"\n\n"+cliDocMarker+got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if old != got {
		t.Errorf("%s is stale: run go generate ./cmd/chaos", path)
	}
	for _, cmd := range []string{"demo", "diff", "judge", "report", "completion"} {
		if !strings.Contains(got, "\n## chaos "+cmd+"\n") {
			t.Errorf("the reference has no section for chaos %s", cmd)
		}
	}
}
