package hub

import (
	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/spec"
)

// Prior is a call made before this trial's hub started that still moves its fault's
// positions: under `chaos run --branch`, a clean trial's call before the branch point
// (docs/shim.md, "--branch"). Failed says the tool answered with an error (a failed
// write is no first write).
type Prior struct {
	Tool   string `json:"tool"`
	Failed bool   `json:"failed,omitempty"`
}

// counter keeps the counts a call's faults.Position is made of.
type counter struct {
	calls      map[string]int // calls per tool
	sinceWrite map[string]int // calls per tool since the first write
	target     int            // calls to the condition's tool
	wrote      bool
}

func newCounter() counter {
	return counter{calls: map[string]int{}, sinceWrite: map[string]int{}}
}

// next counts a call to t and returns its position. A condition armed on the first call
// of a kind (chaos proxy) is bound to its tool here.
func (c *counter) next(s *spec.Spec, cond *faults.Condition, t spec.Tool) faults.Position {
	c.calls[t.Name]++
	if c.wrote {
		c.sinceWrite[t.Name]++
	}
	if cond.Tool == "" && !cond.Clean() && bindsTo(s, *cond, t) {
		cond.Tool = t.Name
	}
	if t.Name == cond.Tool {
		c.target++
	}
	return faults.Position{Tool: t.Name, Write: t.Effect == spec.EffectWrite, Call: c.calls[t.Name], Target: c.target, SinceWrite: c.sinceWrite[t.Name]}
}

// answered notes the reply to a call of t: a write that did not fail is the first write.
func (c *counter) answered(t spec.Tool, failed bool) {
	if t.Effect == spec.EffectWrite && !failed {
		c.wrote = true
	}
}

// replay counts the prior calls as if they had come to this hub. It returns the
// position of the first prior call on which the condition's fault would have fired
// (ok false when none would): a trial that continues from such calls is not the trial
// the fault makes.
func (c *counter) replay(s *spec.Spec, cond *faults.Condition, seed int64, prior []Prior) (at faults.Position, ok bool) {
	for _, p := range prior {
		t, found := toolOf(s, p.Tool)
		if !found {
			continue
		}
		pos := c.next(s, cond, t)
		if !ok && faults.Decide(seed, *cond, pos) {
			at, ok = pos, true
		}
		c.answered(t, p.Failed)
	}
	return at, ok
}

// PriorFires says where, among the prior calls, the condition's fault would have fired
// had they come to a hub of the condition (ok false when it would have fired on none).
func PriorFires(s *spec.Spec, cond faults.Condition, seed int64, prior []Prior) (faults.Position, bool) {
	c := newCounter()
	return c.replay(s, &cond, seed, prior)
}

func toolOf(s *spec.Spec, name string) (spec.Tool, bool) {
	for _, t := range s.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return spec.Tool{}, false
}
