package hub_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// ticketYAML is the world every family is shown on: a source whose reply has records and
// a date, a tool that writes a field of the ticket and one that reads it back.
const ticketYAML = `
name: families
task: Read the orders, then set the ticket's priority to urgent and its team to payments.
agent:
  command: chaos agent scripted
tools:
  - name: read_orders
    description: The customer's orders.
    effect: none
    reply: '` + ordersText + `'
  - name: update_ticket
    description: Sets one field of the ticket.
    effect: write
    key_field: field
    value_field: value
    reply: '{"status": "updated"}'
  - name: get_ticket_field
    description: Reads one field of the ticket.
    effect: read
    key_field: field
    value_field: value
initial_state:
  priority: normal
  team: accounts
faults: [all]
state_checks:
  - {key: priority, equals: urgent}
  - {key: team, equals: payments}
seed: 7
`

const (
	ordersText = `{"orders":[{"id":"A1","status":"open","amount":12.5,"currency":"USD"},{"id":"A2","status":"open","amount":3,"currency":"USD"}],"date":"2026-11-02"}`
	ackText    = `{"status": "updated"}`
	// orders sorted the way an anomaly writes them back.
	orderA1 = `{"id":"A1","status":"open","amount":12.5,"currency":"USD"}`
	orderA2 = `{"id":"A2","status":"open","amount":3,"currency":"USD"}`
)

func ticketSpec(tb testing.TB) *spec.Spec {
	tb.Helper()
	s, err := spec.Parse("families.yaml", []byte(ticketYAML))
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// The fixed sequence every family is driven through.
var ticketCalls = []struct{ tool, args string }{
	{"read_orders", `{}`},
	{"update_ticket", `{"field":"priority","value":"urgent"}`},
	{"update_ticket", `{"field":"team","value":"payments"}`},
	{"get_ticket_field", `{"field":"priority"}`},
}

var (
	okOrders     = world.Reply{Text: ordersText, Status: 200}
	okAck        = world.Reply{Text: ackText, Status: 200}
	unavailable  = world.Reply{Text: `{"error":"503 Service Unavailable: the service is temporarily unavailable"}`, IsError: true, Status: 503}
	writeFailed  = world.Reply{Text: `{"error":"503 Service Unavailable: the write could not be completed"}`, IsError: true, Status: 503}
	sessionEnded = world.Reply{Text: `{"error":"401 Unauthorized: the session has ended, sign in again"}`, IsError: true, Status: 401}

	initial  = map[string]any{"priority": "normal", "team": "accounts"}
	urgent   = map[string]any{"priority": "urgent", "team": "accounts"}
	both     = map[string]any{"priority": "urgent", "team": "payments"}
	teamOnly = map[string]any{"priority": "normal", "team": "payments"}

	// passed is the hit of a call the armed fault did not fire on.
	passed = &record.Hit{Performed: true}
)

func priorityIs(v string) world.Reply {
	return world.Reply{Text: `{"field":"priority","value":"` + v + `"}`, Status: 200}
}

func ordersWith(v string) world.Reply { return world.Reply{Text: v, Status: 200} }

// outcome is what one of the four calls gives: the reply, the hit and real reply the
// record keeps, the world after it.
type outcome struct {
	reply world.Reply
	hit   *record.Hit
	real  string
	state map[string]any
}

// firedAt is the four calls' outcomes when the armed fault touches only call at (its
// outcome o): the others pass, as on clean.
func firedAt(at int, o outcome) [4]outcome {
	calls := [4]outcome{{okOrders, passed, "", initial}, {okAck, passed, "", urgent}, {okAck, passed, "", both}, {priorityIs("urgent"), passed, "", both}}
	calls[at] = o
	return calls
}

func fired(family, how string, performed bool) *record.Hit {
	return &record.Hit{Fired: true, Family: family, How: how, Performed: performed}
}

func TestFamilies(t *testing.T) {
	tests := []struct {
		id       string
		what     string
		possible bool
		calls    [4]outcome
		final    map[string]any
		fired    int
	}{
		{
			id: "clean", possible: true,
			calls: [4]outcome{{okOrders, nil, "", initial}, {okAck, nil, "", urgent}, {okAck, nil, "", both}, {priorityIs("urgent"), nil, "", both}},
			final: both,
		},
		{
			id: "phantom_success@update_ticket", what: "the first call to update_ticket: answered success, nothing stored", possible: true,
			calls: [4]outcome{
				{okOrders, passed, "", initial},
				{okAck, fired("phantom_success", "acknowledged, not stored", false), "", initial},
				{okAck, passed, "", teamOnly},
				{priorityIs("normal"), passed, "", teamOnly},
			},
			final: teamOnly, fired: 1,
		},
		{
			id: "phantom_failure@update_ticket", what: "the first call to update_ticket: stored, answered as failed (a retry writes again)", possible: true,
			calls: firedAt(1, outcome{writeFailed, fired("phantom_failure", "stored, answered as failed", true), ackText, urgent}),
			final: both, fired: 1,
		},
		{
			id: "transient_error@read_orders", what: "the first call to read_orders: 503 once, then the tool works", possible: true,
			calls: firedAt(0, outcome{unavailable, fired("transient_error", "failed with 503, not forwarded", false), "", initial}),
			final: both, fired: 1,
		},
		{
			id: "transient_error@update_ticket", what: "the first call to update_ticket: 503 once, then the tool works", possible: true,
			calls: [4]outcome{
				{okOrders, passed, "", initial},
				{unavailable, fired("transient_error", "failed with 503, not forwarded", false), "", initial},
				{okAck, passed, "", teamOnly},
				{priorityIs("normal"), passed, "", teamOnly},
			},
			final: teamOnly, fired: 1,
		},
		{
			id: "transient_error@get_ticket_field", what: "the first call to get_ticket_field: 503 once, then the tool works", possible: true,
			calls: firedAt(3, outcome{unavailable, fired("transient_error", "failed with 503, not forwarded", false), "", both}),
			final: both, fired: 1,
		},
		{
			id: "permanent_error@read_orders", what: "every call to read_orders: 503 every time", possible: false,
			calls: firedAt(0, outcome{unavailable, fired("permanent_error", "failed with 503, not forwarded", false), "", initial}),
			final: both, fired: 1,
		},
		{
			id: "permanent_error@update_ticket", what: "every call to update_ticket: 503 every time", possible: false,
			calls: [4]outcome{
				{okOrders, passed, "", initial},
				{unavailable, fired("permanent_error", "failed with 503, not forwarded", false), "", initial},
				{unavailable, fired("permanent_error", "failed with 503, not forwarded", false), "", initial},
				{priorityIs("normal"), passed, "", initial},
			},
			final: initial, fired: 2,
		},
		{
			id: "permanent_error@get_ticket_field", what: "every call to get_ticket_field: 503 every time", possible: true,
			calls: firedAt(3, outcome{unavailable, fired("permanent_error", "failed with 503, not forwarded", false), "", both}),
			final: both, fired: 1,
		},
		{
			id: "session_drop@update_ticket", what: "every call to any tool from the 2nd call to update_ticket on: 401, the session is gone", possible: false,
			calls: [4]outcome{
				{okOrders, passed, "", initial},
				{okAck, passed, "", urgent},
				{sessionEnded, fired("session_drop", "session ended: 401, not forwarded", false), "", urgent},
				{sessionEnded, fired("session_drop", "session ended: 401, not forwarded", false), "", urgent},
			},
			final: urgent, fired: 2,
		},
		{
			id: "truncated_reply@read_orders", what: "the first call to read_orders: the reply is cut off mid-structure", possible: true,
			// 62 of 147 bytes: the cut falls between 40% and 60%, where seed 7 puts it.
			calls: firedAt(0, outcome{ordersWith(`{"orders":[{"id":"A1","status":"open","amount":12.5,"currency"`), fired("truncated_reply", "reply cut off mid-structure", true), ordersText, initial}),
			final: both, fired: 1,
		},
		{
			id: "truncated_reply@get_ticket_field", what: "the first call to get_ticket_field: the reply is cut off mid-structure", possible: true,
			// 19 of 37 bytes.
			calls: firedAt(3, outcome{world.Reply{Text: `{"field":"priority"`, Status: 200}, fired("truncated_reply", "reply cut off mid-structure", true), `{"field":"priority","value":"urgent"}`, both}),
			final: both, fired: 1,
		},
		{
			id: "premature_read@read_orders", what: "the first call to read_orders: right shape, every field empty", possible: true,
			calls: firedAt(0, outcome{ordersWith(`{"orders":[],"date":""}`), fired("premature_read", "every field emptied", true), ordersText, initial}),
			final: both, fired: 1,
		},
		{
			id: "premature_read@get_ticket_field", what: "the first call to get_ticket_field: right shape, every field empty", possible: true,
			calls: firedAt(3, outcome{world.Reply{Text: `{"field":"","value":""}`, Status: 200}, fired("premature_read", "every field emptied", true), `{"field":"priority","value":"urgent"}`, both}),
			final: both, fired: 1,
		},
		{
			// The read-back of priority comes after a write to team: it is still answered
			// with priority's value before priority was written.
			id: "stale_read@get_ticket_field", what: "the first call to get_ticket_field after the first write: answered from before the last write", possible: true,
			calls: firedAt(3, outcome{priorityIs("normal"), fired("stale_read", "answered from before the last write", true), `{"field":"priority","value":"urgent"}`, both}),
			final: both, fired: 1,
		},
		{
			id: "data_anomaly.cancelled_record@read_orders", possible: true,
			what:  "every call to read_orders: a cancelled copy of a record is added to the list; the result must not change",
			calls: firedAt(0, outcome{ordersWith(`{"orders":[` + orderA1 + `,{"id":"A1-X","status":"cancelled","amount":12.5,"currency":"USD"},` + orderA2 + `],"date":"2026-11-02"}`), fired("data_anomaly", "data anomaly: cancelled_record", true), ordersText, initial}),
			final: both, fired: 1,
		},
		{
			id: "data_anomaly.duplicate_record@read_orders", possible: true,
			what:  "every call to read_orders: one record arrives twice; it must be counted once",
			calls: firedAt(0, outcome{ordersWith(`{"orders":[` + orderA1 + `,` + orderA2 + `,` + orderA1 + `],"date":"2026-11-02"}`), fired("data_anomaly", "data anomaly: duplicate_record", true), ordersText, initial}),
			final: both, fired: 1,
		},
		{
			id: "data_anomaly.mixed_units@read_orders", possible: false,
			what:  "every call to read_orders: one record's unit is changed; it must not be added in without a word",
			calls: firedAt(0, outcome{ordersWith(`{"orders":[` + orderA1 + `,{"id":"A2","status":"open","amount":3,"currency":"EUR"}],"date":"2026-11-02"}`), fired("data_anomaly", "data anomaly: mixed_units", true), ordersText, initial}),
			final: both, fired: 1,
		},
		{
			id: "data_anomaly.missing_field@read_orders", possible: true,
			what:  "every call to read_orders: a field is missing or empty; it must not be guessed (field \"amount\", was 12.5)",
			calls: firedAt(0, outcome{ordersWith(`{"orders":[{"id":"A1","status":"open","currency":"USD"},` + orderA2 + `],"date":"2026-11-02"}`), fired("data_anomaly", "data anomaly: missing_field", true), ordersText, initial}),
			final: both, fired: 1,
		},
		{
			id: "data_anomaly.stale_date@read_orders", possible: true, // the task never asks about the date
			what:  "every call to read_orders: the data is three days old; it must not be presented as current",
			calls: firedAt(0, outcome{ordersWith(`{"orders":[` + orderA1 + `,` + orderA2 + `],"date":"2026-10-30"}`), fired("data_anomaly", "data anomaly: stale_date", true), ordersText, initial}),
			final: both, fired: 1,
		},
		{
			id: "context_switch@update_ticket", what: "every write from the 2nd call to update_ticket on: lands in another account, answered success", possible: false,
			calls: [4]outcome{
				{okOrders, passed, "", initial},
				{okAck, passed, "", urgent},
				{okAck, fired("context_switch", "stored in another account", true), "", map[string]any{"priority": "urgent", "team": "accounts", "other-account/team": "payments"}},
				{priorityIs("urgent"), passed, "", map[string]any{"priority": "urgent", "team": "accounts", "other-account/team": "payments"}},
			},
			final: map[string]any{"priority": "urgent", "team": "accounts", "other-account/team": "payments"}, fired: 1,
		},
		{
			id: "empty_success@update_ticket", what: "the first call to update_ticket: stored empty, answered success", possible: true,
			calls: [4]outcome{
				{okOrders, passed, "", initial},
				{okAck, fired("empty_success", "stored empty, answered success", true), "", map[string]any{"priority": "", "team": "accounts"}},
				{okAck, passed, "", map[string]any{"priority": "", "team": "payments"}},
				{priorityIs(""), passed, "", map[string]any{"priority": "", "team": "payments"}},
			},
			final: map[string]any{"priority": "", "team": "payments"}, fired: 1,
		},
	}

	s := ticketSpec(t)
	conds, err := faults.Generate(s)
	if err != nil {
		t.Fatal(err)
	}
	// The table shows every condition the spec generates, and no other.
	var ids []string
	for _, tt := range tests {
		ids = append(ids, tt.id)
	}
	if got := faults.IDs(conds); !reflect.DeepEqual(slices.Sorted(slices.Values(ids)), got) {
		t.Fatalf("generated conditions %v\nthe table shows   %v", got, slices.Sorted(slices.Values(ids)))
	}

	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			cond, ok := faults.Find(conds, tt.id)
			if !ok {
				t.Fatalf("no condition %s", tt.id)
			}
			path := filepath.Join(t.TempDir(), "record.jsonl")
			rec, err := record.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			h, err := hub.NewHub(hub.Config{Spec: s, Condition: cond, Seed: s.Seed, Trial: "families/" + tt.id + "/1", Record: rec})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { h.Close("test cleanup") })
			for i, c := range ticketCalls {
				got, err := h.Call(context.Background(), "test", c.tool, json.RawMessage(c.args))
				if err != nil {
					t.Fatalf("call %d %s: %v", i+1, c.tool, err)
				}
				if want := tt.calls[i].reply; got != want {
					t.Errorf("call %d %s %s:\n got %+v\nwant %+v", i+1, c.tool, c.args, got, want)
				}
			}
			if got := h.State(); !reflect.DeepEqual(got, tt.final) {
				t.Errorf("world after: %v, want %v", got, tt.final)
			}
			if err := h.Close("agent exited"); err != nil {
				t.Fatal(err)
			}

			l, err := record.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			possible := tt.possible
			start := record.Row{
				Type: record.TypeSessionStart, Seq: 1, Trial: "families/" + tt.id + "/1", Condition: tt.id, Seed: 7,
				Tools:        []string{"read_orders", "update_ticket", "get_ticket_field"},
				InitialState: initial, SuccessPossible: &possible,
			}
			if tt.id != faults.CleanID {
				start.Fault = &record.Fault{Condition: tt.id, Family: cond.Family, Variant: cond.Variant, Tool: cond.Tool, What: tt.what}
			}
			want := []record.Row{start}
			for i, c := range ticketCalls {
				o := tt.calls[i]
				want = append(want, record.Row{
					Type: record.TypeCall, Seq: i + 2, Transport: "test", Tool: c.tool, Args: json.RawMessage(c.args),
					Hit: o.hit, Reply: o.reply.Text, IsError: o.reply.IsError, Status: o.reply.Status, RealReply: o.real, State: o.state,
				})
			}
			want = append(want, record.Row{Type: record.TypeSessionEnd, Seq: 6, Reason: "agent exited", FinalState: tt.final, Calls: 4, Fired: tt.fired})
			if got := withoutTimes(t, l.Rows); !reflect.DeepEqual(got, want) {
				for i := range max(len(got), len(want)) {
					var g, w record.Row
					if i < len(got) {
						g = got[i]
					}
					if i < len(want) {
						w = want[i]
					}
					if !reflect.DeepEqual(g, w) {
						t.Errorf("record row %d:\n got %s\nwant %s", i+1, rowJSON(g), rowJSON(w))
					}
				}
			}
		})
	}
}

// withoutTimes zeroes the rows' times after checking that each was stamped.
func withoutTimes(tb testing.TB, rows []record.Row) []record.Row {
	tb.Helper()
	out := make([]record.Row, len(rows))
	for i, r := range rows {
		if r.Time.IsZero() || r.Time.Location() != time.UTC {
			tb.Errorf("row %d: time %v, want a UTC time", i+1, r.Time)
		}
		r.Time = time.Time{}
		out[i] = r
	}
	return out
}

func rowJSON(r record.Row) string {
	b, _ := json.Marshal(r)
	return string(b)
}
