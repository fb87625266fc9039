package faults

import (
	"context"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// permanentError fails every call to the tool with a 503.
type permanentError struct{}

func init() {
	Register(Entry{
		Name: "permanent_error", Rank: 40, Family: permanentError{},
		Eligible: "every tool",
		Variants: func(*spec.Spec, spec.Tool) []string { return []string{""} },
		Describe: permanentError{}.describe,
		Success: []SuccessRule{{"permanent_error", "on a source or a write (nothing can be read or stored); never on a read-back, which blocks only the verification",
			func(_ *spec.Spec, t spec.Tool, _ *Condition) bool { return t.Effect != spec.EffectRead }}},
		Manual: &Manual{Every: true, What: "every call to the first tool called was answered 503 and not sent"},
		Skill:  &SkillPlan{Effect: spec.EffectWrite, Rank: 3},
	})
}

func (permanentError) describe(s *spec.Spec, t spec.Tool, c *Condition) Info {
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

func (permanentError) Apply(_ context.Context, c Condition, _ int64, _ Request, _ World) Outcome {
	return Outcome{Reply: world.Failure(503, message(c, TextUnavailable)), How: "failed with 503, not forwarded"}
}
