package hub

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/spec"
)

// TestLoginRevivesDroppedSession: session_drop answers 401 from the 2nd write on; a login
// before the drop changes nothing, one after it revives the session, and the drop does
// not come back.
func TestLoginRevivesDroppedSession(t *testing.T) {
	s := &spec.Spec{Name: "t", Tools: []spec.Tool{{Name: "save", Effect: spec.EffectWrite}}}
	conds, err := faults.Generate(s)
	if err != nil {
		t.Fatal(err)
	}
	cond, ok := faults.Find(conds, "session_drop@save")
	if !ok {
		t.Fatal("no session_drop@save")
	}
	h, err := NewHub(Config{Spec: s, Condition: cond, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close("done")
	save := func(v string) bool {
		args, _ := json.Marshal(map[string]string{"field": "k" + v, "value": v})
		r, err := h.Call(context.Background(), "test", "save", args)
		if err != nil {
			t.Fatal(err)
		}
		return !r.IsError
	}
	if h.Login() != LoginNotDropped || h.SessionDropped() {
		t.Error("a login before the drop revived something")
	}
	if !save("1") || save("2") || save("3") || !h.SessionDropped() {
		t.Fatal("want the 1st write through and the 2nd and 3rd dropped")
	}
	if h.Login() != LoginRevived || h.SessionDropped() {
		t.Error("the login did not revive the dropped session")
	}
	if !save("4") || !save("5") {
		t.Error("the drop repeated after the login")
	}
	if h.Login() != LoginNotDropped {
		t.Error("a second login revived again")
	}
	if st := h.State(); st["k4"] != "4" || st["k2"] != nil {
		t.Errorf("state %v: want k4 written after the login and k2 never", st)
	}
}
