package container

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dockercontainer "github.com/docker/docker/api/types/container"

	"github.com/crashwall/chaos/container"
	"github.com/crashwall/chaos/tests/testkit"
)

// TestOrphanRemovedAtWorkerStart kills (SIGKILL) a chaos run, its embedded worker with
// it, while its agent runs in a container that cannot end by itself (paused, so its relay
// never sees the hub gone), and then starts a fresh worker that has no trial to run: the
// orphan container is gone once that worker has started, before it ran any trial. The
// workers other tests start meanwhile (go test ./... runs packages at once) leave it: a
// worker removes only the orphans of its own work root.
func TestOrphanRemovedAtWorkerStart(t *testing.T) {
	dk := needDocker(t)
	env := testkit.Env(t)
	out := filepath.Join(t.TempDir(), "out")
	p := testkit.Start(t, chaosBin, env, "run", cleanupSpec(t, "5m"), "--data-dir", t.TempDir(), "--out", out,
		"--only", "clean", "--reps", "1", "--", "sleep 600")
	runID := p.WaitStdout(t, runLine, testkit.StartTimeout)[1]
	containersAppear(t, dk, runID)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	list, err := dk.List(ctx, container.LabelRun+"="+runID)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		if err := dk.API().ContainerPause(ctx, s.ID); err != nil {
			t.Fatalf("pause %.12s: %v", s.ID, err)
		}
		t.Cleanup(func() {
			dk.API().ContainerRemove(context.Background(), s.ID, dockercontainer.RemoveOptions{Force: true})
		})
	}
	p.Kill()

	// A fresh server of its own, with no run on it: the worker that joins it has nothing
	// to do but start. Meanwhile the orphan stays (nothing else removes it).
	srv := testkit.StartServer(t, chaosBin, env, t.TempDir(), -1, "--no-worker")
	left := agentContainers(t, dk, runID)
	if len(left) != len(list) {
		t.Fatalf("containers of the killed run before a worker started: %v, want the %d paused", left, len(list))
	}
	for _, s := range left {
		if !strings.HasSuffix(s, "(paused)") {
			t.Fatalf("container %s is not the paused orphan", s)
		}
	}
	t.Logf("orphans of the killed run: %v", left)

	w := testkit.Start(t, chaosBin, env, "worker", "--temporal", srv.Addr)
	w.WaitStdout(t, workerLine, testkit.StartTimeout)
	testkit.WaitFor(t, runTimeout, "the fresh worker to remove the orphan containers", func() bool {
		return len(agentContainers(t, dk, runID)) == 0
	})
	if strings.Contains(w.Stderr.String(), "could not all be removed") {
		t.Errorf("the worker warned:\n%s", w.Stderr)
	}
}
