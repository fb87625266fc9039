package faults

import (
	"context"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// transientError fails one call with a 503; the next call works.
type transientError struct{}

func init() {
	Register(Entry{
		Name: "transient_error", Rank: 30, Family: transientError{},
		Eligible: "every tool",
		Variants: func(*spec.Spec, spec.Tool) []string { return []string{""} },
		Describe: transientError{}.describe,
		Success:  []SuccessRule{{"transient_error", "never: the tool works after one 503", never}},
		Manual:   &Manual{What: "the first call was answered 503 and not sent; the next one worked"},
		Skill:    &SkillPlan{Effect: spec.EffectWrite, Rank: 2},
	})
}

func (transientError) describe(s *spec.Spec, t spec.Tool, c *Condition) Info {
	c.SuccessPossible = successPossible(s, t, c)
	c.What = hitsText(*c) + ": 503 once, then the tool works"
	return Info{Hits: hitsText(*c), Receives: "an error: " + message(*c, TextUnavailable), World: "unchanged by the failed call; a retry goes through"}
}

func (transientError) Hits(c Condition, pos Position) bool { return hitsAt(c, pos) }

func (transientError) Apply(_ context.Context, c Condition, _ int64, _ Request, _ World) Outcome {
	return Outcome{Reply: world.Failure(503, message(c, TextUnavailable)), How: "failed with 503, not forwarded"}
}

func (transientError) DescribeBrowser(c *Condition) Info {
	w := browserWrite(*c)
	c.SuccessPossible = true
	c.What = w + ": answered 503, not sent to the site"
	return Info{Hits: w, Receives: "503 " + TextUnavailable, World: "unchanged by the failed write; a retry goes through"}
}

func (transientError) BrowserAnswer(Condition) BrowserAnswer {
	return BrowserAnswer{Status: 503, Body: errorBody(TextUnavailable), How: "failed with 503, not sent"}
}
