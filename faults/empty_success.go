package faults

import (
	"context"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// emptySuccess stores an empty value and answers success.
type emptySuccess struct{}

func init() {
	Register(Entry{
		Name: "empty_success", Rank: 110, Family: emptySuccess{},
		Eligible: "tools that write", Needs: spec.EffectWrite,
		Variants: func(_ *spec.Spec, t spec.Tool) []string { return writeOnly(t) },
		Describe: emptySuccess{}.describe,
		Success:  []SuccessRule{{"empty_success", "never: the agent can read back and write again", never}},
	})
}

// SimulatedOnly: a real server cannot be made to store an empty value.
func (emptySuccess) SimulatedOnly() {}

func (emptySuccess) describe(s *spec.Spec, t spec.Tool, c *Condition) Info {
	c.SuccessPossible = successPossible(s, t, c)
	c.What = hitsText(*c) + ": stored empty, answered success"
	return Info{Hits: hitsText(*c), Receives: "the tool's success reply " + world.SuccessText(t), World: "the key is stored with an empty value"}
}

func (emptySuccess) Hits(c Condition, pos Position) bool { return hitsAt(c, pos) }

func (emptySuccess) Apply(ctx context.Context, _ Condition, _ int64, req Request, w World) Outcome {
	real := w.Call(ctx, req.Tool, req.Args, world.StoreEmpty)
	return Outcome{Reply: real, Real: real, Performed: true, How: "stored empty, answered success"}
}
