package faults

import (
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// phantomFailure performs a write and answers that it failed, so a retry writes twice.
type phantomFailure struct{}

func init() { register(phantomFailure{}) }

func (phantomFailure) Name() string     { return "phantom_failure" }
func (phantomFailure) Eligible() string { return "tools that write" }

func (phantomFailure) Variants(_ *spec.Spec, t spec.Tool) []string { return writeOnly(t) }

func (phantomFailure) Describe(s *spec.Spec, t spec.Tool, c *Condition) Info {
	c.SuccessPossible = successPossible(s, t, c)
	c.What = hitsText(*c) + ": stored, answered as failed (a retry writes again)"
	return Info{Hits: hitsText(*c), Receives: "an error: " + message(*c, TextWriteFailed), World: "changes as asked"}
}

func (phantomFailure) Hits(c Condition, pos Position) bool { return hitsAt(c, pos) }

func (phantomFailure) Apply(c Condition, _ int64, req Request, w World) Outcome {
	real := w.Call(req.Tool, req.Args, world.Perform)
	return Outcome{Reply: world.Failure(503, message(c, TextWriteFailed)), Real: real, Performed: true, How: "stored, answered as failed"}
}
