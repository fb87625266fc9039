package faults

import (
	"context"
	"fmt"

	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// staleRead answers a read-back from the state before the last write.
type staleRead struct{}

func init() {
	Register(Entry{
		Name: "stale_read", Rank: 80, Family: staleRead{},
		Eligible: "tools that read the state, in a spec with a tool that writes", Needs: spec.EffectRead,
		Variants: staleRead{}.variants,
		Describe: staleRead{}.describe,
		Success:  []SuccessRule{{"stale_read", "never: the agent can read again", never}},
		Skill: &SkillPlan{Effect: spec.EffectRead, Rank: 3, Skip: func(run SkillRun, _ SkillTool) string {
			if !run.AnyWriter {
				return "no tool of the servers writes, so nothing can be stale"
			}
			return ""
		}},
	})
}

func (staleRead) variants(s *spec.Spec, t spec.Tool) []string {
	if t.Effect != spec.EffectRead {
		return nil
	}
	for _, o := range s.Tools {
		if o.Effect == spec.EffectWrite {
			return []string{""}
		}
	}
	return nil
}

func staleHits(c Condition) string {
	return fmt.Sprintf("%s call to %s after the first write", Nth(c.At), c.Tool)
}

func (staleRead) describe(s *spec.Spec, t spec.Tool, c *Condition) Info {
	c.SuccessPossible = successPossible(s, t, c)
	c.What = staleHits(*c) + ": answered from before the last write"
	return Info{Hits: staleHits(*c), Receives: "the value as it was before the last write", World: "unchanged (the tool does not write)"}
}

func (staleRead) Hits(c Condition, pos Position) bool {
	if pos.Tool != c.Tool || pos.SinceWrite == 0 {
		return false
	}
	if c.Every {
		return pos.SinceWrite >= max(c.At, 1)
	}
	return pos.SinceWrite == max(c.At, 1)
}

func (staleRead) Apply(ctx context.Context, _ Condition, _ int64, req Request, w World) Outcome {
	stale := w.ReadBefore(req.Tool, req.Args)
	real := w.Call(ctx, req.Tool, req.Args, world.Perform)
	return Outcome{Reply: stale, Real: real, Performed: true, How: "answered from before the last write"}
}
