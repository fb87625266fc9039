package faults

import (
	"context"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// prematureRead answers with the right shape and every field empty, as if the data
// were still loading.
type prematureRead struct{}

func init() {
	Register(Entry{
		Name: "premature_read", Rank: 70, Family: prematureRead{},
		Eligible: "tools that do not write",
		Variants: func(_ *spec.Spec, t spec.Tool) []string { return notWrite(t) },
		Describe: prematureRead{}.describe,
		Success:  []SuccessRule{{"premature_read", "never: the agent can read again", never}},
		Manual:   &Manual{What: "the first read's reply came back with every value emptied"},
		Skill:    &SkillPlan{Effect: spec.EffectRead, Rank: 2},
	})
}

func (prematureRead) describe(s *spec.Spec, t spec.Tool, c *Condition) Info {
	c.SuccessPossible = successPossible(s, t, c)
	c.What = hitsText(*c) + ": right shape, every field empty"
	return Info{Hits: hitsText(*c), Receives: "the real reply with every value emptied (\"\", 0, false, [])", World: "unchanged (the tool does not write)"}
}

func (prematureRead) Hits(c Condition, pos Position) bool { return hitsAt(c, pos) }

func (prematureRead) Apply(ctx context.Context, _ Condition, _ int64, req Request, w World) Outcome {
	real := w.Call(ctx, req.Tool, req.Args, world.Perform)
	empty := real
	empty.Text = Emptied(real.Text)
	return Outcome{Reply: empty, Real: real, Performed: true, How: "every field emptied"}
}

// DamageStructured empties a real reply's structured content as Apply emptied its text.
func (prematureRead) DamageStructured(real string) string { return Emptied(real) }

// Emptied keeps the shape of a JSON text and empties every value in it, in place: keys,
// their order and the spacing stay as they were. A text that is not JSON becomes "".
func Emptied(text string) string {
	root, ok := parseJSONText(text)
	if !ok {
		return ""
	}
	return applyEdits(text, 0, len(text), emptyEdits(root, nil))
}

func emptyEdits(n *jnode, out []edit) []edit {
	switch n.kind {
	case '{':
		for _, m := range n.members {
			out = emptyEdits(m.val, out)
		}
	case '[':
		out = append(out, edit{n.start, n.end, "[]"})
	case '"':
		out = append(out, edit{n.start, n.end, `""`})
	case '0':
		out = append(out, edit{n.start, n.end, "0"})
	case 'b':
		out = append(out, edit{n.start, n.end, "false"})
	}
	return out
}
