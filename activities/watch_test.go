package activities

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/crashwall/chaos/run"
)

// signalClient records the signals sent through it; every other method is unimplemented.
type signalClient struct {
	client.Client
	mu      sync.Mutex
	signals []sentSignal
}

type sentSignal struct {
	workflowID, runID, name string
	arg                     any
}

func (c *signalClient) SignalWorkflow(ctx context.Context, workflowID, runID, name string, arg any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.signals = append(c.signals, sentSignal{workflowID, runID, name, arg})
	return nil
}

func TestWatchEvents(t *testing.T) {
	limits := func(maxCalls, wallClock, repeated string) []string {
		return []string{"max_calls: 40", "max_calls: " + maxCalls, "wall_clock: 2m", "wall_clock: " + wallClock, "repeated_failures: 5", "repeated_failures: " + repeated}
	}
	type call struct{ tool, args string }
	tests := []struct {
		name      string
		edits     []string
		condition string
		calls     []call
		closeHub  bool
		want      string // "" when the watcher must return without an abort
	}{
		{
			name: "max calls", edits: limits("3", "2m", "0"), condition: "clean",
			calls: []call{{"read_email", `{}`}, {"get_ticket_field", `{"field":"team"}`}, {"nope", `{}`}, {"read_email", `{}`}},
			want:  "more than 3 tool calls (limits.max_calls)",
		},
		{
			name: "repeated failures", edits: limits("0", "2m", "3"), condition: "permanent_error@update_ticket",
			calls: []call{
				{"update_ticket", `{"field":"team","value":"payments"}`},
				{"update_ticket", `{"value":"payments","field":"team"}`}, // same arguments, other order
				{"update_ticket", `{"field":"priority","value":"urgent"}`},
				{"update_ticket", `{"field":"team","value":"payments"}`},
				{"read_email", `{}`},
				{"update_ticket", `{"field":"team","value":"payments"}`},
				{"update_ticket", `{"field":"team","value":"payments"}`},
				{"update_ticket", `{"field":"team","value":"payments"}`},
			},
			want: "same failing call to update_ticket 3 times in a row (limits.repeated_failures)",
		},
		{name: "wall clock", edits: limits("0", "1s", "0"), condition: "clean", want: "wall clock limit of 1s"},
		{name: "hub closes", edits: limits("0", "2m", "0"), condition: "clean", calls: []call{{"read_email", `{}`}}, closeHub: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, env := newActivities(t)
			fake := &signalClient{}
			a.Client = fake
			in := trialInput(t, exampleYAML(t, tt.edits...), examplePath, tt.condition, "agent")
			ws := must[run.Workspace](t, env, a.PrepareWorkspace, in)
			must[run.HubInfo](t, env, a.StartHub, run.AgentInput{Trial: in, Workspace: ws})
			t.Cleanup(func() { a.Teardown(context.Background(), run.TeardownInput{Trial: in, Workspace: ws}) })

			done := make(chan run.WatchResult, 1)
			go func() {
				res, err := execute[run.WatchResult](t, env, a.WatchEvents, run.WatchInput{Trial: in})
				if err != nil {
					t.Errorf("WatchEvents: %v", err)
				}
				done <- res
			}()
			hub := a.host().Live(in.Key()).Hub()
			for _, c := range tt.calls {
				hub.Call(context.Background(), "test", c.tool, json.RawMessage(c.args))
			}
			if tt.closeHub {
				hub.Close("test over")
			}
			var got run.WatchResult
			select {
			case got = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("WatchEvents did not return")
			}
			if !strings.Contains(got.Abort, tt.want) || (tt.want == "") != (got.Abort == "") {
				t.Errorf("abort %q; want one saying %q", got.Abort, tt.want)
			}
			fake.mu.Lock()
			defer fake.mu.Unlock()
			if tt.want == "" {
				if len(fake.signals) != 0 {
					t.Errorf("signals %+v; want none", fake.signals)
				}
				return
			}
			if len(fake.signals) != 1 {
				t.Fatalf("signals %+v; want one abort", fake.signals)
			}
			if s := fake.signals[0]; s.name != run.SignalAbort || s.arg != got.Abort || s.workflowID == "" {
				t.Errorf("signal %+v; want %q to the trial's workflow with the reason", s, run.SignalAbort)
			}
		})
	}
}
