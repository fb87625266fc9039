package activities

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
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
			hub := a.live(in.Key()).hub
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

// The abort rules, row by row.
func TestWatcherRules(t *testing.T) {
	call := func(tool, args string, isErr bool) record.Row {
		return record.Row{Type: record.TypeCall, Tool: tool, Args: json.RawMessage(args), IsError: isErr}
	}
	rejected := record.Row{Type: record.TypeRejected, Tool: "nope"}
	denied := func(args string) record.Row {
		return record.Row{Type: record.TypeRejected, Tool: "browser", Transport: "cdp", Args: json.RawMessage(args), Reason: "denied write: POST to a URL not in browser.allow_writes"}
	}
	tests := []struct {
		name    string
		limits  spec.Limits
		rows    []record.Row
		abortAt int // index of the row that crosses a limit, -1 for none
	}{
		{"no limits", spec.Limits{}, []record.Row{call("a", `{}`, true), call("a", `{}`, true), rejected}, -1},
		{"max calls counts rejected calls", spec.Limits{MaxCalls: 2}, []record.Row{call("a", `{}`, false), rejected, {Type: record.TypeError}, rejected}, 3},
		{"exactly max calls is allowed", spec.Limits{MaxCalls: 2}, []record.Row{call("a", `{}`, false), call("a", `{}`, false)}, -1},
		{"repeated failures", spec.Limits{RepeatedFailures: 2}, []record.Row{call("a", `{"x":1,"y":2}`, true), call("a", `{"y":2,"x":1}`, true)}, 1},
		{"a success breaks the streak", spec.Limits{RepeatedFailures: 2}, []record.Row{call("a", `{}`, true), call("a", `{}`, false), call("a", `{}`, true)}, -1},
		{"other arguments break the streak", spec.Limits{RepeatedFailures: 2}, []record.Row{call("a", `{"x":1}`, true), call("a", `{"x":2}`, true), call("a", `{"x":2}`, true)}, 2},
		{"another tool breaks the streak", spec.Limits{RepeatedFailures: 2}, []record.Row{call("a", `{}`, true), call("b", `{}`, true), call("a", `{}`, true)}, -1},
		{"a rejected call does not break it", spec.Limits{RepeatedFailures: 2}, []record.Row{call("a", `{}`, true), rejected, call("a", `{}`, true)}, 2},
		// The browser guard's denied clicks are rejected rows: the same one again and
		// again is a streak.
		{"repeated denied writes", spec.Limits{RepeatedFailures: 3}, []record.Row{denied(`{"url":"/save"}`), call("a", `{}`, true), denied(`{"url":"/save"}`), denied(`{"url":"/save"}`)}, 3},
		{"a success breaks a denied streak", spec.Limits{RepeatedFailures: 2}, []record.Row{denied(`{}`), call("a", `{}`, false), denied(`{}`)}, -1},
		{"another denial breaks a denied streak", spec.Limits{RepeatedFailures: 2}, []record.Row{denied(`{"url":"/a"}`), denied(`{"url":"/b"}`)}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &watcher{limits: tt.limits}
			at := -1
			for i, r := range tt.rows {
				if w.see(r) != "" {
					at = i
					break
				}
			}
			if at != tt.abortAt {
				t.Errorf("aborted at row %d; want %d", at, tt.abortAt)
			}
		})
	}
}

// Rows the stream dropped are read back from the record.
func TestWatcherCatchesUp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "record.jsonl")
	rec, err := record.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		rec.Write(record.Row{Type: record.TypeCall, Tool: "a", Args: json.RawMessage(`{}`), IsError: true})
	}
	w := &watcher{limits: spec.Limits{RepeatedFailures: 4}, record: path}
	if reason := w.see(record.Row{Type: record.TypeCall, Seq: 1, Tool: "a", Args: json.RawMessage(`{}`), IsError: true}); reason != "" {
		t.Fatalf("aborted after one row: %s", reason)
	}
	// The stream brings row 5: rows 2 to 4 come from the record, and the fourth failure aborts.
	if reason := w.catchUp(5); !strings.Contains(reason, "4 times in a row") || w.last != 4 {
		t.Errorf("after catching up to row 5: last %d, reason %q", w.last, reason)
	}
}
