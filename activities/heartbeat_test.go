package activities

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crashwall/chaos/tests/fixture"

	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"

	"github.com/crashwall/chaos/run"
)

// TestRunAgentHeartbeatsWhileItStops: a cancelled RunAgent keeps heartbeating while it
// stops an agent that takes its time to go (it ignores SIGTERM: it ends by the kill after
// the grace period), and on a context the cancel did not end: the SDK sends no heartbeat
// on a cancelled one, and a stop that outlasts the heartbeat timeout would have the trial
// declared lost while its agent still runs.
func TestRunAgentHeartbeatsWhileItStops(t *testing.T) {
	a, env := newActivities(t)
	a.heartbeatEvery = 20 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	beats := &beatWatch{}
	env.SetWorkerOptions(worker.Options{BackgroundActivityContext: ctx, Interceptors: []interceptor.WorkerInterceptor{beats}})
	// The shell writes its process group (field 5 of its stat): under chaos reap the
	// reaper leads the group, and the agent is gone when the leader is.
	in := agentInput(t, exampleYAML(t), "trap '' TERM\ncut -d' ' -f5 /proc/$$/stat > pgid; sleep 300 & sleep 300")

	done := make(chan error, 1)
	go func() {
		_, err := execute[run.AgentResult](t, env, a.RunAgent, in)
		done <- err
	}()
	pgid := fixture.WaitForPID(t, filepath.Join(in.Workspace.Dir, "pgid"))
	beats.cancelled(pgid)
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a cancelled RunAgent returned no error")
		}
	case <-time.After(15 * time.Minute):
		t.Fatal("RunAgent did not return after the cancel")
	}
	live, dead := beats.afterCancel()
	t.Logf("heartbeats while the cancelled agent was stopped: %d on a live context, %d on the cancelled one", live, dead)
	if live == 0 {
		t.Errorf("no heartbeat on a live context while the cancelled agent was being stopped (%d on the cancelled context)", dead)
	}
}

// beatWatch is a worker interceptor that counts the heartbeats made after the test's
// cancel while the agent's group leader still runs: on a context that is not done
// (live), and on one that is (dead, which the SDK cannot send).
type beatWatch struct {
	interceptor.WorkerInterceptorBase
	mu         sync.Mutex
	pgid       int // set at the cancel
	live, dead int
}

func (b *beatWatch) cancelled(pgid int) {
	b.mu.Lock()
	b.pgid = pgid
	b.mu.Unlock()
}

func (b *beatWatch) afterCancel() (live, dead int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.live, b.dead
}

func (b *beatWatch) beat(ctx context.Context) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pgid == 0 || !leaderRuns(b.pgid) {
		return
	}
	if ctx.Err() == nil {
		b.live++
	} else {
		b.dead++
	}
}

// leaderRuns tells whether the process pid runs (it exists and is not a zombie).
func leaderRuns(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

func (b *beatWatch) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &beatInbound{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}, watch: b}
}

type beatInbound struct {
	interceptor.ActivityInboundInterceptorBase
	watch *beatWatch
}

func (i *beatInbound) Init(outbound interceptor.ActivityOutboundInterceptor) error {
	return i.Next.Init(&beatOutbound{ActivityOutboundInterceptorBase: interceptor.ActivityOutboundInterceptorBase{Next: outbound}, watch: i.watch})
}

type beatOutbound struct {
	interceptor.ActivityOutboundInterceptorBase
	watch *beatWatch
}

func (o *beatOutbound) RecordHeartbeat(ctx context.Context, details ...interface{}) {
	o.watch.beat(ctx)
	o.Next.RecordHeartbeat(ctx, details...)
}
