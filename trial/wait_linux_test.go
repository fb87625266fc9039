package trial

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/tests/fixture"
)

// TestWaitHoldsNoThread starts agents through the process runtime (processRuntime.start,
// which RunAgent uses) and checks that the worker's OS threads do not grow with the
// agents it waits for: a blocking wait (os.Process.Wait's waitid) held one thread per
// agent, 1,000 threads at 1,000 trials in flight. The agents end with the test, and
// each is reaped (done closes).
func TestWaitHoldsNoThread(t *testing.T) {
	h := &Host{}
	s := &spec.Spec{}
	dir := t.TempDir()
	var agents []runningAgent
	start := func(n int) {
		t.Helper()
		for i := range n {
			stdout, err := captureTo(filepath.Join(dir, "out-"+strconv.Itoa(len(agents))+"-"+strconv.Itoa(i)), 1024)
			if err != nil {
				t.Fatal(err)
			}
			stderr, err := captureTo(filepath.Join(dir, "err-"+strconv.Itoa(len(agents))+"-"+strconv.Itoa(i)), 1024)
			if err != nil {
				t.Fatal(err)
			}
			stdout.start()
			stderr.start()
			in := run.AgentInput{Hub: run.HubInfo{Command: "exec sleep 600"}, Workspace: run.Workspace{Dir: dir}}
			ag, err := processRuntime{h: h}.start(context.Background(), s, in, stdout, stderr)
			if err != nil {
				t.Fatal(err)
			}
			agents = append(agents, ag)
			t.Cleanup(func() {
				ag.stop()
				ag.finish(context.Background())
				stdout.finish(time.Second)
				stderr.finish(time.Second)
			})
		}
		// Every agent's waiter has started its wait.
		if !fixture.Until(t, 0, func() bool { return agentsWaited.Load() >= int64(len(agents)) }) {
			t.Fatalf("%d of %d agents waited for at the test's deadline", agentsWaited.Load(), len(agents))
		}
	}
	start(8) // the runtime's own threads for starting processes, made once
	before := threads(t)
	const more = 64
	start(more)
	after := threads(t)
	t.Logf("threads: %d with 8 agents, %d with %d", before, after, 8+more)
	if after-before >= more/4 {
		t.Errorf("the worker's threads grew from %d to %d with %d more agents: a thread is held per waiting agent", before, after, more)
	}
	for _, ag := range agents {
		select {
		case <-ag.done():
			t.Fatalf("agent %s ended while it should sleep", ag.describe())
		default:
		}
	}
	// A waited agent that ends is seen to end.
	agents[0].stop()
	<-agents[0].done()
	if code := agents[0].finish(context.Background()); code != 128+15 {
		t.Errorf("an agent stopped by SIGTERM: exit code %d, want %d", code, 128+15)
	}
}

// threads is this process's OS thread count (/proc/self/status).
func threads(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		if v, ok := bytes.CutPrefix(line, []byte("Threads:")); ok {
			n, err := strconv.Atoi(string(bytes.TrimSpace(v)))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no Threads line in /proc/self/status")
	return 0
}
