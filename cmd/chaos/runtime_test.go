package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDryRunDocker: --dry-run of a spec whose agent runs in a container shows the
// container and the command with the container's tokens, and does not look for the
// agent's program on the worker (it is looked for in the image).
func TestDryRunDocker(t *testing.T) {
	b, err := os.ReadFile(exampleSpec)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(b), "\nagent:\n", "\nagent:\n  runtime: docker\n  image: my-agent:1\n  pids: 64\n  mounts: [/usr]\n", 1)
	path := filepath.Join(t.TempDir(), "docker.yaml")
	os.WriteFile(path, []byte(text), 0o644)
	var out bytes.Buffer
	root := NewCmdRoot(&IOStreams{Out: &out, ErrOut: &out})
	root.SetArgs([]string{"run", path, "--dry-run", "--data-dir", t.TempDir(), "--", "no-such-agent-here", "{wall}", "{wall_url}", "{chaos}"})
	if err := root.Execute(); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{
		"agent runtime docker: image my-agent:1, user the worker's (nobody when root), pids 64; network none, read-only root, no capabilities, no new privileges; writable: the sandbox; read-only: /usr\n",
		"CHAOS_WALL='/chaos/relay /chaos/hub/hub'",
		"CHAOS_WALL_URL=http://127.0.0.1:7070",
		"CHAOS_BIN=/chaos/chaos",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the dry run lacks %q:\n%s", want, out.String())
		}
	}
}
