package hub_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// slowWrites is the simulated world with its writes held until gate is closed, as a real
// server's slow call would be.
type slowWrites struct {
	*world.World
	entered chan struct{}
	gate    chan struct{}
}

func (s *slowWrites) Call(ctx context.Context, t spec.Tool, args map[string]any, mode world.Mode) world.Reply {
	if t.Effect == spec.EffectWrite {
		s.entered <- struct{}{}
		select {
		case <-s.gate:
		case <-ctx.Done():
			return world.Failure(499, "cancelled")
		}
	}
	return s.World.Call(ctx, t, args, mode)
}

// TestSlowCallHoldsNoOtherCall: while the world answers one call slowly (a real server's
// write), the agent's other calls are answered, and Close waits for the slow one, so that
// its row comes before the session's end and its write is in the final state.
func TestSlowCallHoldsNoOtherCall(t *testing.T) {
	s := ticketSpec(t)
	src := &slowWrites{World: world.New(s), entered: make(chan struct{}, 1), gate: make(chan struct{})}
	path := filepath.Join(t.TempDir(), "record.jsonl")
	rec, err := record.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := hub.NewHub(hub.Config{Spec: s, Condition: faults.Condition{}, Seed: 7, Trial: "t/1", Record: rec, Source: src})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	wrote := make(chan error, 1)
	go func() {
		_, err := h.Call(ctx, "mcp", "update_ticket", json.RawMessage(`{"field":"priority","value":"urgent"}`))
		wrote <- err
	}()
	<-src.entered // the write is in the world, held
	if _, err := h.Call(ctx, "mcp", "read_orders", json.RawMessage(`{}`)); err != nil {
		t.Fatalf("a read while a write is held: %v", err)
	}
	closed := make(chan error, 1)
	go func() { closed <- h.Close("the agent exited") }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a call was still being answered", err)
	case <-time.After(100 * time.Millisecond): // Close is waiting, as it must
	}
	close(src.gate)
	if err := <-wrote; err != nil {
		t.Fatalf("the held write: %v", err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	l := readRecord(t, path)
	var tools []string
	for _, r := range l.Rows {
		if r.Type == record.TypeCall {
			tools = append(tools, r.Tool)
		}
	}
	if len(tools) != 2 || tools[0] != "read_orders" || tools[1] != "update_ticket" {
		t.Errorf("rows %v, want the read answered first, then the held write", tools)
	}
	if got := l.End.FinalState["priority"]; got != "urgent" {
		t.Errorf("final state priority %v, want the held write's urgent", got)
	}
}
