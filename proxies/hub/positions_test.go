package hub_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/record"
)

// TestPriorCalls: a hub given prior calls (chaos run --branch: the clean trial's calls
// before the branch point) counts its positions on from them, so a fault on the 2nd
// write fires on the hub's first write when one write came before; PriorFires says when
// the fault would have fired among the prior calls instead.
func TestPriorCalls(t *testing.T) {
	s := ticketSpec(t)
	second := faults.Condition{ID: "phantom_success@update_ticket#2", Family: "phantom_success", Tool: "update_ticket", At: 2, SuccessPossible: true}
	prior := []hub.Prior{{Tool: "get_ticket_field"}, {Tool: "update_ticket"}}

	if at, ok := hub.PriorFires(s, second, 7, prior); ok {
		t.Errorf("the 2nd write fires among one prior write, at %+v", at)
	}
	first := second
	first.ID, first.At = "phantom_success@update_ticket", 1
	if at, ok := hub.PriorFires(s, first, 7, prior); !ok || at.Tool != "update_ticket" || at.Call != 1 {
		t.Errorf("PriorFires of the 1st write = %+v, %v; want the prior write", at, ok)
	}

	h, err := hub.NewHub(hub.Config{Spec: s, Condition: second, Seed: 7, Record: record.Discard(), Prior: prior})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close("done") })
	if _, err := h.Call(context.Background(), "rest", "update_ticket", json.RawMessage(`{"field":"priority","value":"urgent"}`)); err != nil {
		t.Fatal(err)
	}
	if st := h.Stats(); st.Fired != 1 || st.Calls != 1 {
		t.Errorf("Stats %+v: want the hub's first write, the 2nd of the trial, faulted (and only its own call counted)", st)
	}
}
