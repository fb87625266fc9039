package faults

import (
	"context"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// phantomSuccess acknowledges a write and stores nothing.
type phantomSuccess struct{}

func init() {
	Register(Entry{
		Name: "phantom_success", Rank: 10, Family: phantomSuccess{},
		Eligible: "tools that write", Needs: spec.EffectWrite,
		Variants: func(_ *spec.Spec, t spec.Tool) []string { return writeOnly(t) },
		Describe: phantomSuccess{}.describe,
		Success:  []SuccessRule{{"phantom_success", "never: the agent can read back and write again", never}},
		Manual:   &Manual{What: "the first write was answered success and never sent to the server"},
		Skill:    &SkillPlan{Effect: spec.EffectWrite, Rank: 1},
	})
}

func (phantomSuccess) describe(s *spec.Spec, t spec.Tool, c *Condition) Info {
	c.SuccessPossible = successPossible(s, t, c)
	c.What = hitsText(*c) + ": answered success, nothing stored"
	receives := "the tool's success reply " + world.SuccessText(t)
	if t.Server != "" {
		receives = "a real success reply of the tool, seen earlier (else {\"ok\": true}); not forwarded"
	}
	return Info{Hits: hitsText(*c), Receives: receives, World: "unchanged: the write is dropped"}
}

func (phantomSuccess) Hits(c Condition, pos Position) bool { return hitsAt(c, pos) }

func (phantomSuccess) Apply(ctx context.Context, c Condition, _ int64, req Request, w World) Outcome {
	return Outcome{Reply: fabricated(w, req), How: "acknowledged, not stored"}
}

func (phantomSuccess) DescribeBrowser(c *Condition) Info {
	w := browserWrite(*c)
	c.SuccessPossible = true
	c.What = w + ": answered 200 {} , not sent to the site"
	return Info{Hits: w, Receives: "200 with the body {}", World: "unchanged: the write never reaches the site"}
}

func (phantomSuccess) BrowserAnswer(Condition) BrowserAnswer {
	return BrowserAnswer{Status: 200, Body: "{}", How: "answered 200 {}, not sent"}
}

func writeOnly(t spec.Tool) []string {
	if t.Effect == spec.EffectWrite {
		return []string{""}
	}
	return nil
}
