package container

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/container"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/tests/chaosbin"
	"github.com/crashwall/chaos/tests/testkit"
)

var (
	chaosBin string
	repoRoot = chaosbin.Root()
	// dockerErr is why there is no Docker engine ("" when there is one).
	dockerErr string
	// imageTag is the agent image TestMain built.
	imageTag = fmt.Sprintf("chaos-agent-test:%d", os.Getpid())
)

const requireDocker = "CHAOS_REQUIRE_DOCKER"

// hostMounts are the host folders an agent image FROM scratch borrows, read-only: the
// host's sh, node and their libraries, and its CA certificates.
var hostMounts = []string{"/usr", "/lib", "/lib64", "/bin", "/etc/ssl"}

const runTimeout = 15 * time.Minute

func TestMain(m *testing.M) {
	flag.Parse()
	code := testkit.Main(m, "tests/container", func(bin string) {
		chaosBin = bin
		if err := buildImage(); err != nil {
			dockerErr = err.Error()
		}
	})
	if dockerErr == "" {
		removeImage()
	}
	os.Exit(code)
}

// needDocker skips the test without a Docker engine, or fails it where CI asks for one.
func needDocker(t testing.TB) *container.Client {
	t.Helper()
	if dockerErr != "" {
		if os.Getenv(requireDocker) != "" {
			t.Fatalf("%s is set but the agent image could not be made: %s", requireDocker, dockerErr)
		}
		t.Skipf("no Docker engine (%s); CI sets %s to make this a failure", dockerErr, requireDocker)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := container.Dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// buildImage makes the agent image (testkit.BuildAgentImage).
func buildImage() error { return testkit.BuildAgentImage(imageTag) }

// removeImage removes the agent image once the tests are done.
func removeImage() { testkit.RemoveImage(imageTag) }

// dockerAgent is the YAML of an agent section's container keys: the test image, the
// host's folders, and extra read-only mounts.
func dockerAgent(extra ...string) string {
	mounts := append(append([]string{}, hostMounts...), extra...)
	for i, m := range mounts {
		mounts[i] = spec.ShellQuote(m)
	}
	return "  runtime: docker\n  image: " + imageTag + "\n  mounts: [" + strings.Join(mounts, ", ") + "]\n"
}

// withRuntime writes the spec at path with the agent section's lines given after its
// `agent:` line into dir, and returns the new path.
func withRuntime(t testing.TB, path, dir, lines string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if !strings.Contains(text, "\nagent:\n") {
		t.Fatalf("%s has no agent: section", path)
	}
	text = strings.Replace(text, "\nagent:\n", "\nagent:\n"+lines, 1)
	out := filepath.Join(dir, filepath.Base(path))
	if err := os.WriteFile(out, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// agentContainers lists the agent containers of a run (any state).
func agentContainers(t testing.TB, c *container.Client, runID string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	list, err := c.List(ctx, container.LabelRun+"="+runID)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range list {
		out = append(out, fmt.Sprintf("%.12s %s (%s)", s.ID, s.Labels[container.LabelTrial], s.State))
	}
	return out
}

type manifest struct {
	RunID string `json:"run_id"`
}

// runID is the run id in a run folder's manifest.
func runID(t testing.TB, out string) string {
	t.Helper()
	var m manifest
	testkit.ReadJSON(t, filepath.Join(out, "manifest.json"), &m)
	return m.RunID
}

// verdicts reads verdicts.json's trials by id.
func verdicts(t testing.TB, out string) map[string]run.TrialResult {
	t.Helper()
	var v []run.TrialResult
	testkit.ReadJSON(t, filepath.Join(out, "verdicts.json"), &v)
	m := map[string]run.TrialResult{}
	for _, r := range v {
		m[r.ID] = r
	}
	return m
}
