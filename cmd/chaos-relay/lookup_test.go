//go:build unix

package main

import (
	"os"
	"path/filepath"
	"testing"

	shimwall "github.com/crashwall/chaos/proxies/shim"
)

// TestLookPathSkipsLaunchers: a container's launcher (REAL lookup:FOLDER, as proxies/shim
// writes it) finds the real program on PATH past the launchers' own folder.
func TestLookPathSkipsLaunchers(t *testing.T) {
	if lookupPrefix != shimwall.LookupPrefix {
		t.Fatalf("the relay's lookup prefix %q is not proxies/shim's %q", lookupPrefix, shimwall.LookupPrefix)
	}
	launchers, real := t.TempDir(), t.TempDir()
	for _, d := range []string{launchers, real} {
		if err := os.WriteFile(filepath.Join(d, "python3"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", launchers+string(filepath.ListSeparator)+real)
	if got := lookPath("python3", launchers); got != filepath.Join(real, "python3") {
		t.Errorf("lookPath = %q, want the one in %s", got, real)
	}
	if got := lookPath("node", launchers); got != "" {
		t.Errorf("lookPath of a program on no PATH folder = %q", got)
	}
}
