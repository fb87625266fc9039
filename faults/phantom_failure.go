package faults

import (
	"context"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// phantomFailure performs a write and answers that it failed, so a retry writes twice.
type phantomFailure struct{}

func init() {
	Register(Entry{
		Name: "phantom_failure", Rank: 20, Family: phantomFailure{},
		Eligible: "tools that write", Needs: spec.EffectWrite,
		Variants: func(_ *spec.Spec, t spec.Tool) []string { return writeOnly(t) },
		Describe: phantomFailure{}.describe,
		Success:  []SuccessRule{{"phantom_failure", "never: the write was stored", never}},
		Manual:   &Manual{What: "the first write was performed and answered as failed (a retry writes twice)"},
		Skill:    &SkillPlan{Effect: spec.EffectWrite, Rank: 4},
	})
}

func (phantomFailure) describe(s *spec.Spec, t spec.Tool, c *Condition) Info {
	c.SuccessPossible = successPossible(s, t, c)
	c.What = hitsText(*c) + ": stored, answered as failed (a retry writes again)"
	return Info{Hits: hitsText(*c), Receives: "an error: " + message(*c, TextWriteFailed), World: "changes as asked"}
}

func (phantomFailure) Hits(c Condition, pos Position) bool { return hitsAt(c, pos) }

func (phantomFailure) Apply(ctx context.Context, c Condition, _ int64, req Request, w World) Outcome {
	real := w.Call(ctx, req.Tool, req.Args, world.Perform)
	return Outcome{Reply: world.Failure(503, message(c, TextWriteFailed)), Real: real, Performed: true, How: "stored, answered as failed"}
}

func (phantomFailure) DescribeBrowser(c *Condition) Info {
	w := browserWrite(*c)
	c.SuccessPossible = true
	c.What = w + ": sent to the site, answered 500 to the page"
	return Info{Hits: w, Receives: "500 with an error body; the site's real answer is recorded", World: "changes as asked: a retry writes twice"}
}

func (phantomFailure) BrowserAnswer(Condition) BrowserAnswer {
	return BrowserAnswer{Send: true, Status: 500, Body: `{"error":"500 Internal Server Error: the write could not be completed"}`, How: "sent, answered 500"}
}
