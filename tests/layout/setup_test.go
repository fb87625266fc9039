package layout

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSetupChecksVersions: scripts/setup refuses a Go older than go.mod's go line and a
// Node.js older than 20 (Debian 12's own), before it installs anything, with a message
// that says what to install. The fakes answer the version questions the script asks.
func TestSetupChecksVersions(t *testing.T) {
	root := moduleRoot(t)
	goVersion, err := exec.Command("go", "env", "GOVERSION").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, goVer, node string
		want              []string
	}{
		{"old node", strings.TrimSpace(string(goVersion)), "v18.19.0", []string{"Node.js 18.19.0 is older than the 20", "nodejs.org"}},
		{"old go", "go1.26.1", "v20.20.2", []string{"Go 1.26.1 is older than the 1.26.8 go.mod asks for", "go.dev/dl"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			bin := t.TempDir()
			fake := func(name, out string) {
				script := "#!/bin/sh\necho " + out + "\n"
				if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			fake("go", c.goVer)
			fake("node", c.node)
			cmd := exec.Command("bash", "scripts/setup")
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "GO="+filepath.Join(bin, "go"))
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("scripts/setup accepted go %s and node %s:\n%s", c.goVer, c.node, out)
			}
			for _, w := range c.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("scripts/setup said %q, want it to say %q", out, w)
				}
			}
			if strings.Contains(string(out), "apt-get install") || strings.Contains(string(out), "npm ci") {
				t.Errorf("scripts/setup went on to install after refusing:\n%s", out)
			}
		})
	}
}
