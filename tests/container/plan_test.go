package container

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/tests/chaosbin"
	"github.com/crashwall/chaos/tests/testkit"
)

// TestPlanChecksEngineAndImage: a spec whose agents run in containers is refused when it
// is planned (exit 1, one line) when no Docker engine answers, or when its image is not on
// the engine, instead of every trial ending no_verdict with the reason in result.json.
func TestPlanChecksEngineAndImage(t *testing.T) {
	needDocker(t)
	example := filepath.Join(chaosbin.Root(), "examples", "support-ticket.yaml")
	for _, c := range []struct {
		name, lines string
		env         []string
		want        string
	}{
		{"no engine", dockerAgent(), []string{"DOCKER_HOST=unix://" + filepath.Join(t.TempDir(), "no-engine.sock")},
			"agent.runtime docker: no Docker engine answers (start dockerd, or set DOCKER_HOST)"},
		{"no image", strings.Replace(dockerAgent(), imageTag, "chaos-no-such-image:1", 1), nil,
			"agent.runtime docker: agent.image chaos-no-such-image:1 is not on this Docker engine, and chaos pulls nothing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := withRuntime(t, example, t.TempDir(), c.lines)
			env := append(testkit.Env(t), c.env...)
			out := filepath.Join(t.TempDir(), "out")
			r := testkit.Run(t, chaosBin, env, 5*time.Minute, "run", path, "--data-dir", t.TempDir(), "--out", out)
			if r.Code != 1 || !strings.Contains(r.Stderr, c.want) {
				t.Errorf("exit %d, %q; want 1 and %q", r.Code, r.Stderr, c.want)
			}
			if _, err := os.Stat(filepath.Join(out, "manifest.json")); err == nil {
				t.Errorf("the refused run wrote a run folder")
			}
		})
	}
}
