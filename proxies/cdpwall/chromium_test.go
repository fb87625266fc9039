package cdpwall

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLaunchChromiumDeepTMPDIR: a TMPDIR and a profile folder deeper than a unix socket's
// address allows (a test's temporary folder named after a long subtest is) still give a
// browser that opens its debugging port: Chromium aborted at start there ("Socket path too
// long" for its SingletonSocket under TMPDIR), which was TestPlaywrightMCP's phantom_success
// failure. What the browser left in a temporary folder goes with Close.
func TestLaunchChromiumDeepTMPDIR(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	deep := filepath.Join(t.TempDir(), strings.Repeat("d", 60), "phantom_success@browser2196203941", "001", "tmp")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if len(deep)+len(singletonSocket) <= maxSocketPath {
		t.Fatalf("the folder %s is not deep enough to show anything", deep)
	}
	t.Setenv("TMPDIR", deep)
	for _, profileRoot := range []string{deep, t.TempDir()} {
		c, err := LaunchChromium(ctx, "", profileRoot)
		if err != nil {
			t.Fatalf("profile under %s: %v", profileRoot, err)
		}
		var v struct {
			Browser string `json:"Browser"`
		}
		if err := getJSON(ctx, c.HTTP+"/json/version", &v); err != nil || v.Browser == "" {
			t.Errorf("the browser's /json/version: %+v, %v", v, err)
		}
		tmp := c.tmp
		c.Close()
		if _, err := os.Stat(tmp); !os.IsNotExist(err) {
			t.Errorf("the browser's temporary folder %s is still there after Close (%v)", tmp, err)
		}
	}
	if left, _ := os.ReadDir(deep); len(left) > 0 {
		t.Errorf("the browser left %d entries in TMPDIR %s: %v", len(left), deep, left[0].Name())
	}
}

// TestLastLines: the error's stderr is its last lines, after the FATAL line that says why
// Chromium aborted (its zygotes' lines come after it), each line once.
func TestLastLines(t *testing.T) {
	s := "a\n[1:1:FATAL:x.cc] Socket path too long\nb\nc\nd\n"
	if got, want := lastLines(s, 3), "[1:1:FATAL:x.cc] Socket path too long | b | c | d"; got != want {
		t.Errorf("lastLines: %q, want %q", got, want)
	}
	if got, want := lastLines("[1:FATAL:y] z\nb\n", 3), "[1:FATAL:y] z | b"; got != want {
		t.Errorf("lastLines: %q, want %q", got, want)
	}
}
