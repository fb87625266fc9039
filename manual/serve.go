package manual

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/proxies/upstream"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
)

// Serve runs name's real server behind the wall, over MCP stdio on in and out, until the
// client goes or SIGTERM or SIGHUP comes. While a run is open on name its fault is armed
// and its calls recorded; otherwise every call passes through untouched.
func (md *Mode) Serve(ctx context.Context, name string, in io.Reader, out io.Writer) error {
	dir, err := md.dir()
	if err != nil {
		return err
	}
	sv, err := loadServer(dir, name)
	if err != nil {
		return err
	}
	s := &spec.Spec{Name: name, Servers: []spec.Server{{Name: sv.Name, Command: sv.Command, Args: sv.Args}}}
	up, err := upstream.OpenUpstream(ctx, upstream.UpstreamConfig{Spec: s})
	if err != nil {
		return err
	}
	defer up.Close()
	m := &proxy{dir: dir, name: name, up: up}
	defer m.close("the proxy stopped")
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// A run that ends while the agent is idle is closed within a second, not at the next call.
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				m.hub()
			}
		}
	}()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-ctx.Done():
		}
	}()
	return upstream.ServeUpstream(ctx, up, m.hub, in, out)
}

// proxy follows the open run: a hub (fault armed, record written) while one is
// open for this server, none while it is not.
type proxy struct {
	dir  string
	name string
	up   *upstream.Upstream

	mu    sync.Mutex
	runID string
	h     *hub.Hub
}

// hub is the hub of the run open now, opened or closed as the run state says.
func (m *proxy) hub() *hub.Hub {
	m.mu.Lock()
	defer m.mu.Unlock()
	run, ok := readRun(filepath.Join(m.dir, "current.json"))
	if !ok || run.Name != m.name {
		m.closeLocked("the run ended")
		return nil
	}
	if run.ID == m.runID && m.h != nil {
		return m.h
	}
	m.closeLocked("another run started")
	rec, err := record.Open(nextRecord(filepath.Join(m.dir, "runs", run.ID)))
	if err != nil {
		return nil
	}
	cond := faults.Condition{ID: run.Family, Family: run.Family, At: 1, What: what(run.Family),
		SuccessPossible: !faults.EndsTheSession(run.Family)}
	if f, ok := faults.Lookup(run.Family); ok && f.Manual != nil {
		cond.Every = f.Manual.Every
	}
	// The hub must not close the servers when a run ends: they serve the next one.
	h, err := hub.NewHub(hub.Config{Spec: m.up.Spec(), Condition: cond, Seed: run.Seed, Trial: run.ID, Record: rec, Source: keepOpen{m.up}})
	if err != nil {
		rec.Close(record.Row{Reason: "the hub could not start: " + err.Error()})
		return nil
	}
	m.runID, m.h = run.ID, h
	return h
}

// keepOpen is the servers without their Close, for a hub that must not close them.
type keepOpen struct{ *upstream.Upstream }

func (keepOpen) Close() error { return nil }

func (m *proxy) close(reason string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closeLocked(reason)
}

func (m *proxy) closeLocked(reason string) {
	if m.h != nil {
		m.h.Close(reason)
	}
	m.h, m.runID = nil, ""
}

// nextRecord is a fresh record file in dir: a proxy restarted mid-run starts another.
func nextRecord(dir string) string {
	for i := 1; ; i++ {
		name := "record.jsonl"
		if i > 1 {
			name = fmt.Sprintf("record.%d.jsonl", i)
		}
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			return p
		}
	}
}
