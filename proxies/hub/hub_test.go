package hub_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// openTicketHub starts a hub on the ticket world with cond armed, recording to a file.
func openTicketHub(tb testing.TB, cond faults.Condition) (*hub.Hub, string) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "record.jsonl")
	rec, err := record.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	h, err := hub.NewHub(hub.Config{Spec: ticketSpec(tb), Condition: cond, Seed: 7, Trial: "t/1", Record: rec})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { h.Close("test cleanup") })
	return h, path
}

func readRecord(tb testing.TB, path string) *record.Log {
	tb.Helper()
	l, err := record.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

func TestRefusedCalls(t *testing.T) {
	h, path := openTicketHub(t, faults.Condition{})
	ctx := context.Background()
	tests := []struct {
		name, tool, args string
		status           int
		msg              string
		// recorded is how the record keeps the arguments.
		recorded string
	}{
		{"unknown tool", "delete_ticket", `{"field": "priority"}`, 404,
			`unknown tool "delete_ticket" (tools: ["get_ticket_field","read_orders","update_ticket"])`, `{"field":"priority"}`},
		{"missing required argument", "update_ticket", `{"field":"priority"}`, 400,
			`arguments of update_ticket: validating root: required: missing properties: ["value"]`, `{"field":"priority"}`},
		{"argument of the wrong type", "update_ticket", `{"field":"priority","value":3}`, 400,
			`arguments of update_ticket: validating root: validating /properties/value: type: 3 has type "integer", want "string"`, `{"field":"priority","value":3}`},
		{"not an object", "get_ticket_field", `["priority"]`, 400,
			`arguments of get_ticket_field: must be a JSON object, got an array`, `["priority"]`},
		{"not JSON", "get_ticket_field", `{"field":`, 400,
			`arguments of get_ticket_field: not valid JSON: unexpected end of JSON input`, `"{\"field\":"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reply, err := h.Call(ctx, "rest", tt.tool, json.RawMessage(tt.args))
			var ce *hub.CallError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v (%T), want a *hub.CallError", err, err)
			}
			if ce.Status != tt.status || ce.Msg != tt.msg || err.Error() != tt.msg {
				t.Errorf("CallError{%d, %q}, want {%d, %q}", ce.Status, ce.Msg, tt.status, tt.msg)
			}
			if reply != (world.Reply{}) {
				t.Errorf("reply %+v with a refused call, want none", reply)
			}
		})
	}
	// The hub keeps serving, and a refused call is no call: positions and counts skip it.
	reply, err := h.Call(ctx, "rest", "get_ticket_field", json.RawMessage(`{"field":"priority"}`))
	if err != nil || reply != priorityIs("normal") {
		t.Fatalf("call after refusals = %+v, %v", reply, err)
	}
	if got := h.Stats(); got != (hub.Stats{Calls: 1}) {
		t.Errorf("Stats = %+v, want 1 call", got)
	}
	if err := h.Close("done"); err != nil {
		t.Fatal(err)
	}

	l := readRecord(t, path)
	var want []record.Row
	for i, tt := range tests {
		want = append(want, record.Row{Type: record.TypeRejected, Seq: i + 2, Transport: "rest", Tool: tt.tool, Args: json.RawMessage(tt.recorded), Reason: tt.msg, Status: tt.status})
	}
	want = append(want,
		record.Row{Type: record.TypeCall, Seq: len(tests) + 2, Transport: "rest", Tool: "get_ticket_field", Args: json.RawMessage(`{"field":"priority"}`), Reply: priorityIs("normal").Text, Status: 200, State: initial},
		record.Row{Type: record.TypeSessionEnd, Seq: len(tests) + 3, Reason: "done", FinalState: initial, Calls: 1},
	)
	if got := withoutTimes(t, l.Rows[1:]); !reflect.DeepEqual(got, want) {
		t.Errorf("record:\n got %+v\nwant %+v", got, want)
	}
}

func TestClosedHub(t *testing.T) {
	cond, ok := faults.Find(generated(t), "phantom_success@update_ticket")
	if !ok {
		t.Fatal("no phantom_success@update_ticket")
	}
	h, path := openTicketHub(t, cond)
	ctx := context.Background()
	if _, err := h.Call(ctx, "mcp", "update_ticket", json.RawMessage(`{"field":"priority","value":"urgent"}`)); err != nil {
		t.Fatal(err)
	}
	events, _ := h.Subscribe()

	if err := h.Close("timeout"); err != nil {
		t.Fatal(err)
	}
	if err := h.Close("agent exited"); err != nil {
		t.Errorf("second Close: %v", err)
	}
	for _, c := range []struct{ tool, args string }{
		{"update_ticket", `{"field":"team","value":"payments"}`},
		{"read_orders", ``},
		{"delete_ticket", `{}`},          // unknown: still the closed error, not a 404
		{"update_ticket", `{"field":1}`}, // bad arguments: likewise
	} {
		reply, err := h.Call(ctx, "mcp", c.tool, json.RawMessage(c.args))
		if !errors.Is(err, hub.ErrClosed) || reply != (world.Reply{}) {
			t.Errorf("%s after Close = %+v, %v; want hub.ErrClosed", c.tool, reply, err)
		}
	}
	// The subscription saw the session end and was closed.
	var got []string
	for r := range events {
		got = append(got, r.Type)
	}
	if want := []string{record.TypeSessionEnd}; !reflect.DeepEqual(got, want) {
		t.Errorf("events after Subscribe: %v, want %v", got, want)
	}
	if late, _ := h.Subscribe(); late != nil {
		if _, open := <-late; open {
			t.Error("a subscription after Close is open")
		}
	}

	l := readRecord(t, path)
	var types []string
	for _, r := range l.Rows {
		types = append(types, r.Type)
	}
	if want := []string{record.TypeSessionStart, record.TypeCall, record.TypeSessionEnd}; !reflect.DeepEqual(types, want) {
		t.Fatalf("record rows %v, want %v", types, want)
	}
	wantEnd := record.Row{Type: record.TypeSessionEnd, Seq: 3, Reason: "timeout", FinalState: initial, Calls: 1, Fired: 1}
	if got := withoutTimes(t, []record.Row{*l.End}); !reflect.DeepEqual(got[0], wantEnd) {
		t.Errorf("session_end %+v, want %+v", got[0], wantEnd)
	}
}

func generated(tb testing.TB) []faults.Condition {
	tb.Helper()
	conds, err := faults.Generate(ticketSpec(tb))
	if err != nil {
		tb.Fatal(err)
	}
	return conds
}

// With a rate, whether the n-th call to the target is hit is the same whatever else the
// agent calls in between: the hub passes positions that count per tool.
func TestRateIgnoresOtherCalls(t *testing.T) {
	cond := faults.Condition{ID: "transient_error@read_orders", Family: "transient_error", Tool: "read_orders", At: 1, Every: true, Rate: 0.5, SuccessPossible: true}
	const n = 40
	run := func(between [][2]string) []bool {
		h, path := openTicketHub(t, cond)
		for i := range n {
			if len(between) > 0 {
				b := between[i%len(between)]
				if b[0] != "" {
					if _, err := h.Call(context.Background(), "rest", b[0], json.RawMessage(b[1])); err != nil {
						t.Fatal(err)
					}
				}
			}
			if _, err := h.Call(context.Background(), "rest", "read_orders", nil); err != nil {
				t.Fatal(err)
			}
		}
		h.Close("done")
		var out []bool
		for _, r := range readRecord(t, path).Calls() {
			if r.Tool == "read_orders" {
				out = append(out, r.Hit.Fired)
			}
		}
		return out
	}
	alone := run(nil)
	mixed := run([][2]string{
		{"update_ticket", `{"field":"priority","value":"urgent"}`},
		{"", ""},
		{"get_ticket_field", `{"field":"team"}`},
		{"update_ticket", `{"field":"team","value":"payments"}`},
	})
	if !reflect.DeepEqual(alone, mixed) {
		t.Errorf("hits on read_orders\n alone %v\n mixed %v", alone, mixed)
	}
	k := 0
	for _, f := range alone {
		if f {
			k++
		}
	}
	if k == 0 || k == n {
		t.Errorf("rate 0.5 fired on %d of %d calls", k, n)
	}
}

func TestConcurrentCalls(t *testing.T) {
	cond, _ := faults.Find(generated(t), "permanent_error@get_ticket_field")
	h, path := openTicketHub(t, cond)
	const workers, each = 8, 25
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				var err error
				switch i % 3 {
				case 0:
					_, err = h.Call(context.Background(), "mcp", "update_ticket", json.RawMessage(fmt.Sprintf(`{"field":"w%d","value":"%d"}`, w, i)))
				case 1:
					_, err = h.Call(context.Background(), "mcp", "get_ticket_field", json.RawMessage(`{"field":"priority"}`))
				default:
					_, err = h.Call(context.Background(), "mcp", "nope", nil)
					if ce := (*hub.CallError)(nil); errors.As(err, &ce) && ce.Status == 404 {
						err = nil
					}
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	// Each worker made 9 writes, 8 reads (all failing) and 8 refused calls.
	if got, want := h.Stats(), (hub.Stats{Calls: workers * 17, Fired: workers * 8}); got != want {
		t.Errorf("Stats = %+v, want %+v", got, want)
	}
	h.Close("done")
	l := readRecord(t, path)
	if got, want := len(l.Rows), 1+workers*each+1; got != want {
		t.Fatalf("%d rows, want %d", got, want)
	}
	for i, r := range l.Rows {
		if r.Seq != i+1 {
			t.Fatalf("row %d has seq %d", i+1, r.Seq)
		}
	}
	state := h.State()
	for w := range workers {
		if got := state[fmt.Sprintf("w%d", w)]; got != "24" {
			t.Errorf("w%d = %v, want the worker's last write 24", w, got)
		}
	}
}

// A fault that cannot apply is an error, never a quiet no-op: the agent gets a 500 and
// the record an error row instead of a call row.
func TestFaultThatCannotApply(t *testing.T) {
	s, err := spec.Parse("no-units.yaml", []byte(`
task: Add up the orders.
agent: {command: chaos agent scripted}
tools:
  - {name: read_orders, effect: none, reply: '{"orders":[{"id":"A1","amount":1}]}'}
`))
	if err != nil {
		t.Fatal(err)
	}
	// Generate offers no mixed_units here (no record has a unit); arm it by hand.
	cond := faults.Condition{ID: "data_anomaly.mixed_units@read_orders", Family: "data_anomaly", Variant: "mixed_units", Tool: "read_orders", At: 1, Every: true}
	path := filepath.Join(t.TempDir(), "record.jsonl")
	rec, err := record.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := hub.NewHub(hub.Config{Spec: s, Condition: cond, Seed: 1, Record: rec})
	if err != nil {
		t.Fatal(err)
	}
	reply, err := h.Call(context.Background(), "stdio", "read_orders", json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	const reason = "data anomaly mixed_units cannot apply to this reply of read_orders"
	if want := (world.Reply{Text: `{"error":"chaos: ` + reason + `"}`, IsError: true, Status: 500}); reply != want {
		t.Errorf("reply %+v, want %+v", reply, want)
	}
	h.Close("done")
	l := readRecord(t, path)
	want := []record.Row{
		{Type: record.TypeError, Seq: 2, Tool: "read_orders", Args: json.RawMessage(`{}`), Reason: reason},
		// The call is counted though it has no call row, and the fault did not fire.
		{Type: record.TypeSessionEnd, Seq: 3, Reason: "done", Calls: 1},
	}
	if got := withoutTimes(t, l.Rows[1:]); !reflect.DeepEqual(got, want) {
		t.Errorf("record:\n got %+v\nwant %+v", got, want)
	}
}
