package world_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// ticketWorld is a world with a source, a write tool and a read tool, starting at
// {priority: normal, team: accounts}.
func ticketWorld(tb testing.TB) (*world.World, spec.Tool, spec.Tool, spec.Tool) {
	tb.Helper()
	src := spec.Tool{Name: "read_email", Effect: spec.EffectNone, Reply: `{"body": "urgent, payments"}`}
	upd := spec.Tool{Name: "update_ticket", Effect: spec.EffectWrite, KeyField: "field", ValueField: "value", Reply: `{"status": "updated"}`}
	get := spec.Tool{Name: "get_ticket_field", Effect: spec.EffectRead, KeyField: "field", ValueField: "value"}
	s := &spec.Spec{
		Tools:        []spec.Tool{src, upd, get},
		InitialState: map[string]any{"priority": "normal", "team": "accounts"},
	}
	return world.New(s), src, upd, get
}

func TestCall(t *testing.T) {
	type call struct {
		tool string
		args map[string]any
		mode world.Mode
		want world.Reply
	}
	tests := []struct {
		name       string
		calls      []call
		wantState  map[string]any
		wantWrites int
	}{
		{
			name: "write then read",
			calls: []call{
				{"update_ticket", map[string]any{"field": "priority", "value": "urgent"}, world.Perform, world.Reply{Text: `{"status": "updated"}`, Status: 200}},
				{"get_ticket_field", map[string]any{"field": "priority"}, world.Perform, world.Reply{Text: `{"field":"priority","value":"urgent"}`, Status: 200}},
			},
			wantState:  map[string]any{"priority": "urgent", "team": "accounts"},
			wantWrites: 1,
		},
		{
			name: "skip answers the acknowledgement and stores nothing",
			calls: []call{
				{"update_ticket", map[string]any{"field": "priority", "value": "urgent"}, world.Skip, world.Reply{Text: `{"status": "updated"}`, Status: 200}},
				{"get_ticket_field", map[string]any{"field": "priority"}, world.Perform, world.Reply{Text: `{"field":"priority","value":"normal"}`, Status: 200}},
			},
			wantState:  map[string]any{"priority": "normal", "team": "accounts"},
			wantWrites: 0,
		},
		{
			name: "store empty",
			calls: []call{
				{"update_ticket", map[string]any{"field": "team", "value": "payments"}, world.StoreEmpty, world.Reply{Text: `{"status": "updated"}`, Status: 200}},
				{"get_ticket_field", map[string]any{"field": "team"}, world.Perform, world.Reply{Text: `{"field":"team","value":""}`, Status: 200}},
			},
			wantState:  map[string]any{"priority": "normal", "team": ""},
			wantWrites: 1,
		},
		{
			name: "other account",
			calls: []call{
				{"update_ticket", map[string]any{"field": "team", "value": "payments"}, world.OtherAccount, world.Reply{Text: `{"status": "updated"}`, Status: 200}},
				{"get_ticket_field", map[string]any{"field": "team"}, world.Perform, world.Reply{Text: `{"field":"team","value":"accounts"}`, Status: 200}},
			},
			wantState:  map[string]any{"priority": "normal", "team": "accounts", "other-account/team": "payments"},
			wantWrites: 1,
		},
		{
			name: "a source answers its reply and ignores the mode",
			calls: []call{
				{"read_email", nil, world.Perform, world.Reply{Text: `{"body": "urgent, payments"}`, Status: 200}},
				{"read_email", nil, world.StoreEmpty, world.Reply{Text: `{"body": "urgent, payments"}`, Status: 200}},
			},
			wantState: map[string]any{"priority": "normal", "team": "accounts"},
		},
		{
			name: "a key never written reads null",
			calls: []call{
				{"get_ticket_field", map[string]any{"field": "assignee"}, world.Perform, world.Reply{Text: `{"field":"assignee","value":null}`, Status: 200}},
			},
			wantState: map[string]any{"priority": "normal", "team": "accounts"},
		},
		{
			name: "missing arguments fail with 400 and store nothing",
			calls: []call{
				{"update_ticket", map[string]any{"value": "urgent"}, world.Perform, world.Reply{Text: `{"error":"missing argument \"field\""}`, IsError: true, Status: 400}},
				{"update_ticket", map[string]any{"field": "priority"}, world.Perform, world.Reply{Text: `{"error":"missing argument \"value\""}`, IsError: true, Status: 400}},
				{"get_ticket_field", map[string]any{}, world.Perform, world.Reply{Text: `{"error":"missing argument \"field\""}`, IsError: true, Status: 400}},
			},
			wantState: map[string]any{"priority": "normal", "team": "accounts"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, _, _, _ := ticketWorld(t)
			for i, c := range tt.calls {
				tool, ok := w.Tool(c.tool)
				if !ok {
					t.Fatalf("no tool %q", c.tool)
				}
				if got := w.Call(context.Background(), tool, c.args, c.mode); got != c.want {
					t.Errorf("call %d (%s %v): got %+v, want %+v", i+1, c.tool, c.args, got, c.want)
				}
			}
			if got := w.State(); !reflect.DeepEqual(got, tt.wantState) {
				t.Errorf("state: got %v, want %v", got, tt.wantState)
			}
			if got := w.Writes(); got != tt.wantWrites {
				t.Errorf("writes: got %d, want %d", got, tt.wantWrites)
			}
		})
	}
}

// ReadBefore is what a stale read answers: the value the key held before its last write,
// even when other keys were written since.
func TestReadBefore(t *testing.T) {
	w, _, upd, get := ticketWorld(t)
	readBefore := func(key string) string {
		t.Helper()
		r := w.ReadBefore(get, map[string]any{"field": key})
		if r.IsError || r.Status != 200 {
			t.Fatalf("ReadBefore(%s) = %+v", key, r)
		}
		return r.Text
	}
	write := func(key, value string) {
		t.Helper()
		w.Call(context.Background(), upd, map[string]any{"field": key, "value": value}, world.Perform)
	}

	if got, want := readBefore("priority"), `{"field":"priority","value":"normal"}`; got != want {
		t.Errorf("before any write: got %s, want %s", got, want)
	}
	write("priority", "urgent")
	if got, want := readBefore("priority"), `{"field":"priority","value":"normal"}`; got != want {
		t.Errorf("after priority=urgent: got %s, want %s", got, want)
	}
	write("team", "payments")
	for key, want := range map[string]string{
		"priority": `{"field":"priority","value":"normal"}`,
		"team":     `{"field":"team","value":"accounts"}`,
	} {
		if got := readBefore(key); got != want {
			t.Errorf("after team=payments, %s: got %s, want %s", key, got, want)
		}
	}
	write("priority", "high")
	if got, want := readBefore("priority"), `{"field":"priority","value":"urgent"}`; got != want {
		t.Errorf("after priority=high: got %s, want %s", got, want)
	}
	write("assignee", "dana")
	if got, want := readBefore("assignee"), `{"field":"assignee","value":null}`; got != want {
		t.Errorf("a key that did not exist before its write: got %s, want %s", got, want)
	}
	// A skipped write reaches nothing, so it changes nothing ReadBefore answers either.
	w.Call(context.Background(), upd, map[string]any{"field": "priority", "value": "low"}, world.Skip)
	if got, want := readBefore("priority"), `{"field":"priority","value":"urgent"}`; got != want {
		t.Errorf("after a skipped write: got %s, want %s", got, want)
	}
	if got := w.ReadBefore(get, map[string]any{}); got != (world.Reply{Text: `{"error":"missing argument \"field\""}`, IsError: true, Status: 400}) {
		t.Errorf("ReadBefore without a key: got %+v", got)
	}
	want := map[string]any{"priority": "high", "team": "payments", "assignee": "dana"}
	if got := w.State(); !reflect.DeepEqual(got, want) {
		t.Errorf("state: got %v, want %v", got, want)
	}
}

func TestFixedKeyTool(t *testing.T) {
	set := spec.Tool{Name: "close_ticket", Effect: spec.EffectWrite, Key: "status"}
	get := spec.Tool{Name: "ticket_status", Effect: spec.EffectRead, Key: "status"}
	w := world.New(&spec.Spec{Tools: []spec.Tool{set, get}})
	if got, want := w.Call(context.Background(), set, map[string]any{"value": "closed"}, world.Perform), (world.Reply{Text: `{"status": "ok"}`, Status: 200}); got != want {
		t.Errorf("write: got %+v, want %+v", got, want)
	}
	if got, want := w.Call(context.Background(), get, nil, world.Perform), (world.Reply{Text: `{"field":"status","value":"closed"}`, Status: 200}); got != want {
		t.Errorf("read: got %+v, want %+v", got, want)
	}
}

// A read answers the key field first and writes & < > as they are: the agent reads the
// value it stored, not Go's HTML escapes.
func TestReadReplyText(t *testing.T) {
	get := spec.Tool{Name: "get", Effect: spec.EffectRead, KeyField: "zkey", ValueField: "avalue"}
	w := world.New(&spec.Spec{Tools: []spec.Tool{get}, InitialState: map[string]any{"k": "Fish & Chips <b>"}})
	want := world.Reply{Text: `{"zkey":"k","avalue":"Fish & Chips <b>"}`, Status: 200}
	if got := w.Call(context.Background(), get, map[string]any{"zkey": "k"}, world.Perform); got != want {
		t.Errorf("read: got %+v, want %+v", got, want)
	}
}

func TestStateIsACopy(t *testing.T) {
	initial := map[string]any{"ticket": map[string]any{"priority": "normal"}}
	w := world.New(&spec.Spec{InitialState: initial})
	got := w.State()
	got["ticket"].(map[string]any)["priority"] = "changed"
	got["new"] = 1
	initial["ticket"].(map[string]any)["priority"] = "changed too"
	want := map[string]any{"ticket": map[string]any{"priority": "normal"}}
	if again := w.State(); !reflect.DeepEqual(again, want) {
		t.Errorf("state after changing copies: got %v, want %v", again, want)
	}
}

func TestReplies(t *testing.T) {
	if got, want := world.OK("done"), (world.Reply{Text: "done", Status: 200}); got != want {
		t.Errorf("OK: got %+v, want %+v", got, want)
	}
	if got, want := world.Failure(503, `quote " and <tag>`), (world.Reply{Text: `{"error":"quote \" and <tag>"}`, IsError: true, Status: 503}); got != want {
		t.Errorf("Failure: got %+v, want %+v", got, want)
	}
	for _, tt := range []struct {
		tool spec.Tool
		want string
	}{
		{spec.Tool{Effect: spec.EffectWrite}, `{"status": "ok"}`},
		{spec.Tool{Effect: spec.EffectWrite, Reply: `{"status": "updated"}`}, `{"status": "updated"}`},
		{spec.Tool{Effect: spec.EffectNone}, `{"status": "ok"}`},
		{spec.Tool{Effect: spec.EffectNone, Reply: `[1,2]`}, `[1,2]`},
	} {
		if got := world.SuccessText(tt.tool); got != tt.want {
			t.Errorf("SuccessText(%+v) = %s, want %s", tt.tool, got, tt.want)
		}
	}
}

func TestAnnotations(t *testing.T) {
	yes, no := true, false
	hints := func(readOnly, destructive, idempotent, openWorld *bool) spec.Hints {
		return spec.Hints{ReadOnly: readOnly, Destructive: destructive, Idempotent: idempotent, OpenWorld: openWorld}
	}
	tests := []struct {
		name string
		tool spec.Tool
		want spec.Hints
	}{
		{"source", spec.Tool{Effect: spec.EffectNone}, hints(&yes, &no, &yes, &no)},
		{"read", spec.Tool{Effect: spec.EffectRead}, hints(&yes, &no, &yes, &no)},
		{"write overwrites its key", spec.Tool{Effect: spec.EffectWrite}, hints(&no, &yes, &yes, &no)},
		{"the spec wins over the effect", spec.Tool{Effect: spec.EffectWrite, Hints: &spec.Hints{Destructive: &no, Idempotent: &no}}, hints(&no, &no, &no, &no)},
		{"a real server's own", spec.Tool{Effect: spec.EffectWrite, Server: "db", Annotations: []byte(`{"title":"Insert","readOnlyHint":false,"destructiveHint":false}`)}, hints(&no, &no, nil, nil)},
		{"a real server without any", spec.Tool{Effect: spec.EffectWrite, Server: "db"}, hints(nil, nil, nil, nil)},
		{"the spec wins over a real server's", spec.Tool{Server: "db", Annotations: []byte(`{"readOnlyHint":true}`), Hints: &spec.Hints{ReadOnly: &no, OpenWorld: &yes}}, hints(&no, nil, nil, &yes)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := world.Annotations(tt.tool); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Annotations = %s, want %s", show(got), show(tt.want))
			}
		})
	}
}

func show(h spec.Hints) string {
	b := func(p *bool) string {
		if p == nil {
			return "-"
		}
		return map[bool]string{true: "true", false: "false"}[*p]
	}
	return "{readOnly " + b(h.ReadOnly) + ", destructive " + b(h.Destructive) + ", idempotent " + b(h.Idempotent) + ", openWorld " + b(h.OpenWorld) + "}"
}
