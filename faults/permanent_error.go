package faults

import (
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// permanentError fails every call to the tool with a 503.
type permanentError struct{}

func init() { register(permanentError{}) }

func (permanentError) Name() string     { return "permanent_error" }
func (permanentError) Eligible() string { return "every tool" }

func (permanentError) Variants(*spec.Spec, spec.Tool) []string { return []string{""} }

func (permanentError) Describe(s *spec.Spec, t spec.Tool, c *Condition) Info {
	c.Every = true
	// A broken read-back only blocks verification; a broken source or write blocks the task.
	c.SuccessPossible = successPossible(s, t, c)
	c.What = hitsText(*c) + ": 503 every time"
	return Info{Hits: hitsText(*c), Receives: "an error every time: " + message(*c, TextUnavailable), World: "never changed by this tool"}
}

func (permanentError) Hits(c Condition, pos Position) bool {
	c.Every = true
	return hitsAt(c, pos)
}

func (permanentError) Apply(c Condition, _ int64, _ Request, _ World) Outcome {
	return Outcome{Reply: world.Failure(503, message(c, TextUnavailable)), How: "failed with 503, not forwarded"}
}
