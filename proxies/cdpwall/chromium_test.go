package cdpwall

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLaunchChromiumRetriesAnEarlyExit: a browser that exits before it opens its
// debugging port is started again, three times in all, each with a profile of its own,
// and then the error says it exited.
func TestLaunchChromiumRetriesAnEarlyExit(t *testing.T) {
	dir := t.TempDir()
	starts := filepath.Join(dir, "starts")
	bin := filepath.Join(dir, "dying-browser")
	script := "#!/bin/sh\nfor a; do case $a in --user-data-dir=*) echo \"${a#--user-data-dir=}\" >> " + starts + ";; esac; done\nexit 0\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := LaunchChromium(context.Background(), bin, dir)
	if !errors.Is(err, errExitedAtStart) {
		t.Fatalf("error %v, want the browser's early exit", err)
	}
	b, _ := os.ReadFile(starts)
	profiles := strings.Fields(string(b))
	if len(profiles) != 3 || profiles[0] == profiles[1] || profiles[1] == profiles[2] {
		t.Errorf("the browser was started with profiles %q, want three starts with three profiles", profiles)
	}
}
