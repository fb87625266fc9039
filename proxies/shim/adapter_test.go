package shim

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// portalAdapter is examples/portal's adapter and the folder it runs in.
func portalAdapter(tb testing.TB) (argv []string, dir string) {
	_, file, _, _ := runtime.Caller(0)
	dir = filepath.Join(filepath.Dir(file), "..", "..", "examples", "portal")
	return []string{"python3", "twin/adapter.py"}, dir
}

func adapterSpec(argv []string) *spec.Spec {
	book := spec.Script{Name: "book_shipment", Path: "scripts/book_shipment.py", Effect: spec.EffectWrite, Args: []string{"order"},
		Key: "shipment/{order}", Adapter: argv, AdapterTimeout: spec.Duration(time.Minute)}
	get := spec.Script{Name: "get_shipment", Path: "scripts/get_shipment.py", Effect: spec.EffectRead, Args: []string{"order"},
		Key: "shipment/{order}", Adapter: argv, AdapterTimeout: spec.Duration(time.Minute)}
	s := &spec.Spec{Name: "t", Scripts: []spec.Script{book, get}}
	s.Tools = []spec.Tool{spec.ScriptTool(book), spec.ScriptTool(get)}
	return s
}

// TestTwinModes: the adapter's writes are stored as the fault's mode says, the adapter is
// told the outcome, and a stale read is given the value from before the last write.
func TestTwinModes(t *testing.T) {
	argv, dir := portalAdapter(t)
	s := adapterSpec(argv)
	tw, err := OpenTwin(s, faults.Condition{Family: "context_switch"}, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tw.Close()
	book, get := s.Tools[0], s.Tools[1]
	args := func(order, carrier string) map[string]any {
		return map[string]any{"order": order, "carrier": carrier, spec.ScriptKeyArg: "shipment/" + order}
	}
	steps := []struct {
		call      func() world.Reply
		stdout    string
		key, want any
	}{
		{func() world.Reply { return tw.Fabricate(book, args("R-1", "DHL")) }, "booked R-1 with DHL (tracking DHL-R1-0001)\n", "shipment/R-1", nil},
		{func() world.Reply { return tw.Call(context.Background(), book, args("R-1", "DHL"), world.Perform) }, "booked R-1 with DHL (tracking DHL-R1-0001)\n", "shipment/R-1", "DHL"},
		{func() world.Reply { return tw.Call(context.Background(), book, args("R-1", "UPS"), world.Perform) }, "booked R-1 with UPS (tracking UPS-R1-0001)\n", "shipment/R-1", "UPS"},
		{func() world.Reply { return tw.ReadBefore(get, args("R-1", "")) }, "R-1 shipment: DHL\n", "shipment/R-1", "UPS"},
		{func() world.Reply { return tw.Call(context.Background(), get, args("R-1", ""), world.Perform) }, "R-1 shipment: UPS\n", "shipment/R-1", "UPS"},
		{func() world.Reply { return tw.Call(context.Background(), book, args("R-2", "DHL"), world.StoreEmpty) }, "booked R-2 with DHL (tracking DHL-R2-0001)\n", "shipment/R-2", ""},
		{func() world.Reply { return tw.Call(context.Background(), book, args("R-3", "DHL"), world.OtherAccount) }, "booked R-3 with DHL (tracking DHL-R3-0001)\n", "other-account/shipment/R-3", "DHL"},
	}
	for i, st := range steps {
		r := st.call()
		if r.IsError || r.Text != st.stdout {
			t.Errorf("step %d: %+v, want %q", i, r, st.stdout)
		}
		if got := tw.State()[st.key.(string)]; got != st.want {
			t.Errorf("step %d: %s = %v, want %v", i, st.key, got, st.want)
		}
	}
	// An unknown carrier: the adapter's own failure, exit 3, nothing stored.
	r := tw.Call(context.Background(), book, args("R-4", "POST"), world.Perform)
	if !r.IsError || r.Status != adapterStatus || !strings.Contains(r.Text, `"exit":3`) || tw.State()["shipment/R-4"] != nil {
		t.Errorf("unknown carrier: %+v", r)
	}
	if f := tw.Failure(); f != "" {
		t.Errorf("failure %q after good replies", f)
	}
}

// TestTwinBadReplies: a reply that breaks the protocol fails the adapter, with a reason
// that names what was wrong, and every later call is refused.
func TestTwinBadReplies(t *testing.T) {
	cases := []struct{ reply, want string }{
		{`{"stdout":"x"}`, `replied without "exit"`},
		{`{"exit":300}`, "replied exit 300"},
		{`{"exit":0,"writes":{"other-account/k":"v"}}`, `a write to key "other-account/k"`},
		{`[1,2]`, "not the protocol's JSON object"},
	}
	for _, tc := range cases {
		argv := []string{"sh", "-c", `while read -r l; do printf '%s\n' '` + tc.reply + `'; done`}
		s := adapterSpec(argv)
		tw, err := OpenTwin(s, faults.Condition{}, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		r := tw.Call(context.Background(), s.Tools[0], map[string]any{"order": "R-1", spec.ScriptKeyArg: "shipment/R-1"}, world.Perform)
		if !r.IsError || !strings.Contains(tw.Failure(), tc.want) || len(tw.State()) != 0 {
			t.Errorf("reply %s: %+v, failure %q; want one that says %q, nothing stored", tc.reply, r, tw.Failure(), tc.want)
		}
		if r := tw.Call(context.Background(), s.Tools[1], map[string]any{"order": "R-1", spec.ScriptKeyArg: "shipment/R-1"}, world.Perform); !r.IsError {
			t.Errorf("reply %s: a later call answered %+v", tc.reply, r)
		}
		tw.Close()
	}
	// A read script's adapter that writes breaks the protocol too.
	s := adapterSpec([]string{"sh", "-c", `while read -r l; do echo '{"exit":0,"writes":{"k":"v"}}'; done`})
	tw, err := OpenTwin(s, faults.Condition{}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer tw.Close()
	tw.Call(context.Background(), s.Tools[1], map[string]any{"order": "R-1", spec.ScriptKeyArg: "shipment/R-1"}, world.Perform)
	if !strings.Contains(tw.Failure(), "replied writes for a script whose effect is read") {
		t.Errorf("a read that writes: failure %q", tw.Failure())
	}
}

// BenchmarkAdapterCall: one call answered by examples/portal's Python adapter kept running
// for the trial (how chaos runs it) against one that starts the adapter for the call, in
// the same run.
func BenchmarkAdapterCall(b *testing.B) {
	argv, dir := portalAdapter(b)
	req := AdapterRequest{Script: "get_shipment", Args: map[string]string{"order": "R-1"}, Key: "shipment/R-1", Current: "DHL", State: map[string]any{}}
	kept, err := startAdapter(argv, dir)
	if err != nil {
		b.Fatal(err)
	}
	defer kept.kill()
	ask := func(p *adapterProc) {
		rep, err := p.ask(req, time.Minute)
		if err != nil || rep.Stdout != "R-1 shipment: DHL\n" {
			b.Fatalf("%+v %v", rep, err)
		}
	}
	InTurn(b, "per-trial", func() { ask(kept) }, "per-call", func() {
		p, err := startAdapter(argv, dir)
		if err != nil {
			b.Fatal(err)
		}
		ask(p)
		p.kill()
	})
}
