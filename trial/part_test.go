package trial

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
)

// TestEvidenceOrder: a trial's evidence is chosen from its spec (a worker with no live
// trial reads it from the record) and asked in one order, which decides whose reason for
// no verdict stands: the spend, the browser guard, the real world, the script shim, the
// operator, the reviewer, the model proxy. The spend is read with no spec too (the
// agent's own figure).
func TestEvidenceOrder(t *testing.T) {
	all := &spec.Spec{
		Browser: &spec.Browser{}, Servers: []spec.Server{{Name: "files"}}, Scripts: []spec.Script{{Name: "book"}},
		Operator: &spec.Operator{}, Model: spec.ModelSpec{Upstream: "http://127.0.0.1:1", Reviewer: &spec.ReviewerSpec{}},
	}
	tests := []struct {
		name string
		s    *spec.Spec
		task spec.Task
		want []string
	}{
		{"a spec that cannot be read", nil, spec.Task{}, []string{"cost"}},
		{"a simulated world", &spec.Spec{}, spec.Task{}, []string{"cost"}},
		{"a probe of the task", &spec.Spec{}, spec.Task{Probes: []spec.Probe{{Kind: "command"}}}, []string{"cost", "real world"}},
		{"every part", all, spec.Task{}, []string{"cost", "browser guard", "real world", "script shim", "operator", "reviewer", "model proxy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, e := range evidenceFor(tt.s, tt.task, nil) {
				got = append(got, e.part())
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("evidence %q; want %q", got, tt.want)
			}
		})
	}
}

// notingPart is a part that notes when it is closed and whether the hub could still record.
type notingPart struct {
	name   string
	hub    *hub.Hub
	closed *[]string
	err    error
}

func (p notingPart) Close() error {
	note := p.name
	if !errors.Is(p.hub.Record(record.Row{Type: record.TypeOutside, Reason: p.name}), hub.ErrClosed) {
		note += " (record open)"
	}
	*p.closed = append(*p.closed, note)
	return p.err
}

// recording is a part whose close writes into the record.
type recording struct{ notingPart }

func (recording) recordsOnClose() {}

// TestStopClosesTheParts: a trial's parts close when it stops, last set up first, those
// that write into the record before the hub ends it; a part that fails to close says so.
func TestStopClosesTheParts(t *testing.T) {
	h, env := newHost(t)
	in := trialInput(t, exampleYAML(t), examplePath, "clean", "agent")
	ws := must[run.Workspace](t, env, h.PrepareWorkspace, in)
	must[run.HubInfo](t, env, h.StartHub, run.AgentInput{Trial: in, Workspace: ws})
	lt := h.drop(in.Key())
	var closed []string
	first := notingPart{name: "first", hub: lt.hub, closed: &closed, err: errors.New("the first part would not close")}
	lt.add(first)
	lt.add(recording{notingPart{name: "second", hub: lt.hub, closed: &closed}})
	lt.add(notingPart{name: "third", hub: lt.hub, closed: &closed})
	err := lt.stop("test")
	if want := []string{"second (record open)", "third", "first"}; !reflect.DeepEqual(closed, want) {
		t.Errorf("closed %q; want %q", closed, want)
	}
	if err == nil || !strings.Contains(err.Error(), "the first part would not close") {
		t.Errorf("stop: %v; want the first part's failure", err)
	}
}
