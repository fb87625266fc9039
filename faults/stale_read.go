package faults

import (
	"fmt"

	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// staleRead answers a read-back from the state before the last write.
type staleRead struct{}

func init() { register(staleRead{}) }

func (staleRead) Name() string { return "stale_read" }
func (staleRead) Eligible() string {
	return "tools that read the state, in a spec with a tool that writes"
}

func (staleRead) Variants(s *spec.Spec, t spec.Tool) []string {
	if t.Effect != spec.EffectRead {
		return nil
	}
	for _, o := range s.Tools {
		if o.Effect == spec.EffectWrite {
			return []string{""}
		}
	}
	return nil
}

func staleHits(c Condition) string {
	return fmt.Sprintf("%s call to %s after the first write", Nth(c.At), c.Tool)
}

func (staleRead) Describe(s *spec.Spec, t spec.Tool, c *Condition) Info {
	c.SuccessPossible = successPossible(s, t, c)
	c.What = staleHits(*c) + ": answered from before the last write"
	return Info{Hits: staleHits(*c), Receives: "the value as it was before the last write", World: "unchanged (the tool does not write)"}
}

func (staleRead) Hits(c Condition, pos Position) bool {
	if pos.Tool != c.Tool || pos.SinceWrite == 0 {
		return false
	}
	if c.Every {
		return pos.SinceWrite >= max(c.At, 1)
	}
	return pos.SinceWrite == max(c.At, 1)
}

func (staleRead) Apply(_ Condition, _ int64, req Request, w World) Outcome {
	stale := w.ReadBefore(req.Tool, req.Args)
	real := w.Call(req.Tool, req.Args, world.Perform)
	return Outcome{Reply: stale, Real: real, Performed: true, How: "answered from before the last write"}
}
