package faults

import (
	"context"
	"encoding/json"
	"unicode/utf8"

	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// truncatedReply cuts a reply off mid-structure.
type truncatedReply struct{}

func init() {
	Register(Entry{
		Name: "truncated_reply", Rank: 60, Family: truncatedReply{},
		Eligible: "tools that do not write",
		Variants: func(_ *spec.Spec, t spec.Tool) []string { return notWrite(t) },
		Describe: truncatedReply{}.describe,
		Success:  []SuccessRule{{"truncated_reply", "never: the agent can read again", never}},
		Manual:   &Manual{What: "the first read's reply was cut off mid-structure"},
		Skill:    &SkillPlan{Effect: spec.EffectRead, Rank: 1},
	})
}

func (truncatedReply) describe(s *spec.Spec, t spec.Tool, c *Condition) Info {
	c.SuccessPossible = successPossible(s, t, c)
	c.What = hitsText(*c) + ": the reply is cut off mid-structure"
	return Info{Hits: hitsText(*c), Receives: "the first 40-60% of the real reply, not valid JSON", World: "unchanged (the tool does not write)"}
}

func (truncatedReply) Hits(c Condition, pos Position) bool { return hitsAt(c, pos) }

func (truncatedReply) Apply(ctx context.Context, c Condition, seed int64, req Request, w World) Outcome {
	real := w.Call(ctx, req.Tool, req.Args, world.Perform)
	cut := real
	cut.Text = Truncate(real.Text, unit(seed, c.ID, req.Pos))
	return Outcome{Reply: cut, Real: real, Performed: true, How: "reply cut off mid-structure"}
}

// Truncate cuts text to between 40% and 60% of its length (u in [0,1) picks where),
// on a rune boundary, never to nothing and never to something that still parses as JSON.
func Truncate(text string, u float64) string {
	if text == "" {
		return ""
	}
	n := len(text)
	at := int(float64(n) * (0.4 + 0.2*u))
	at = min(max(at, 1), n-1)
	if n == 1 {
		return ""
	}
	for at > 1 && !utf8.RuneStart(text[at]) {
		at--
	}
	for at > 1 && json.Valid([]byte(text[:at])) {
		at--
	}
	return text[:at]
}

func notWrite(t spec.Tool) []string {
	if t.Effect != spec.EffectWrite {
		return []string{""}
	}
	return nil
}
