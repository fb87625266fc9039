package faults

import (
	"context"
	"fmt"

	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// contextSwitch moves the session into another account mid-task: from the 2nd call
// to the write tool on (At, when larger), every write lands in the other account
// and is answered as a normal success.
type contextSwitch struct{}

func init() {
	Register(Entry{
		Name: "context_switch", Rank: 100, Family: contextSwitch{},
		Eligible: "tools that write", Needs: spec.EffectWrite,
		Variants: func(_ *spec.Spec, t spec.Tool) []string { return writeOnly(t) },
		Describe: contextSwitch{}.describe,
		Success:  []SuccessRule{{"context_switch", "always: later writes land in another account", always}},
	})
}

// The capabilities: another account exists only in the simulated world, and the switch
// lasts.
func (contextSwitch) SimulatedOnly() {}
func (contextSwitch) Lasting()       {}

func (contextSwitch) describe(s *spec.Spec, t spec.Tool, c *Condition) Info {
	c.SuccessPossible = successPossible(s, t, c)
	hits := fmt.Sprintf("every write from %s call to %s on", Nth(dropFrom(*c)), c.Tool)
	c.What = hits + ": lands in another account, answered success"
	return Info{Hits: hits, Receives: "the tool's success reply " + world.SuccessText(t), World: "the write is stored under " + world.OtherAccountPrefix + "<key>, not where asked"}
}

func (contextSwitch) Hits(c Condition, pos Position) bool {
	return pos.Write && pos.Target >= dropFrom(c)
}

// LandsAt: the write is stored in another account (Misdirects).
func (contextSwitch) LandsAt(key string) string { return world.OtherAccountPrefix + key }

func (contextSwitch) Apply(ctx context.Context, _ Condition, _ int64, req Request, w World) Outcome {
	real := w.Call(ctx, req.Tool, req.Args, world.OtherAccount)
	return Outcome{Reply: real, Real: real, Performed: true, How: "stored in another account"}
}
