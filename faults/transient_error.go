package faults

import (
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// transientError fails one call with a 503; the next call works.
type transientError struct{}

func init() { register(transientError{}) }

func (transientError) Name() string     { return "transient_error" }
func (transientError) Eligible() string { return "every tool" }

func (transientError) Variants(*spec.Spec, spec.Tool) []string { return []string{""} }

func (transientError) Describe(s *spec.Spec, t spec.Tool, c *Condition) Info {
	c.SuccessPossible = successPossible(s, t, c)
	c.What = hitsText(*c) + ": 503 once, then the tool works"
	return Info{Hits: hitsText(*c), Receives: "an error: " + message(*c, TextUnavailable), World: "unchanged by the failed call; a retry goes through"}
}

func (transientError) Hits(c Condition, pos Position) bool { return hitsAt(c, pos) }

func (transientError) Apply(c Condition, _ int64, _ Request, _ World) Outcome {
	return Outcome{Reply: world.Failure(503, message(c, TextUnavailable)), How: "failed with 503, not forwarded"}
}
