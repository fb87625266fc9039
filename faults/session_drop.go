package faults

import (
	"fmt"

	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// sessionDrop ends the session mid-task: from the 2nd call to the write tool on
// (At, when larger), every call to every tool is answered 401.
type sessionDrop struct{}

func init() { register(sessionDrop{}) }

func (sessionDrop) Name() string     { return "session_drop" }
func (sessionDrop) Eligible() string { return "tools that write" }

func (sessionDrop) Variants(_ *spec.Spec, t spec.Tool) []string { return writeOnly(t) }

func dropFrom(c Condition) int { return max(c.At, 2) }

func (sessionDrop) Describe(s *spec.Spec, t spec.Tool, c *Condition) Info {
	c.SuccessPossible = successPossible(s, t, c)
	hits := fmt.Sprintf("every call to any tool from %s call to %s on", Nth(dropFrom(*c)), c.Tool)
	c.What = hits + ": 401, the session is gone"
	return Info{Hits: hits, Receives: "an error: " + message(*c, TextSessionEnded), World: "keeps what was written before the drop, nothing after"}
}

func (sessionDrop) Hits(c Condition, pos Position) bool { return pos.Target >= dropFrom(c) }

func (sessionDrop) Apply(c Condition, _ int64, _ Request, _ World) Outcome {
	return Outcome{Reply: world.Failure(401, message(c, TextSessionEnded)), How: "session ended: 401, not forwarded"}
}
