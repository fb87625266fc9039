package faults

import (
	"context"
	"fmt"

	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// sessionDrop ends the session mid-task: from the 2nd call to the write tool on
// (At, when larger), every call to every tool is answered 401.
type sessionDrop struct{}

func init() {
	Register(Entry{
		Name: "session_drop", Rank: 50, Family: sessionDrop{},
		Eligible: "tools that write", Needs: spec.EffectWrite,
		Variants: func(_ *spec.Spec, t spec.Tool) []string { return writeOnly(t) },
		Describe: sessionDrop{}.describe,
		Success:  []SuccessRule{{"session_drop", "always: the job is half done and must be reported (unless an operator's login revives the session, which the trial records)", always}},
		Manual:   &Manual{What: "from the 2nd call to the first tool that writes on, every call was answered 401 and not sent"},
		Skill:    &SkillPlan{Whole: sessionDrop{}.planSkill},
	})
}

// The capabilities: the session is gone until a login revives it, and the drop lasts.
func (sessionDrop) EndsSession() {}
func (sessionDrop) Lasting()     {}

func dropFrom(c Condition) int { return max(c.At, 2) }

func (sessionDrop) describe(s *spec.Spec, t spec.Tool, c *Condition) Info {
	c.SuccessPossible = successPossible(s, t, c)
	hits := fmt.Sprintf("every call to any tool from %s call to %s on", Nth(dropFrom(*c)), c.Tool)
	c.What = hits + ": 401, the session is gone"
	return Info{Hits: hits, Receives: "an error: " + message(*c, TextSessionEnded), World: "keeps what was written before the drop, nothing after"}
}

func (sessionDrop) Hits(c Condition, pos Position) bool { return pos.Target >= dropFrom(c) }

func (sessionDrop) Apply(_ context.Context, c Condition, _ int64, _ Request, _ World) Outcome {
	return Outcome{Reply: world.Failure(401, message(c, TextSessionEnded)), How: "session ended: 401, not forwarded"}
}

func (sessionDrop) DescribeBrowser(c *Condition) Info {
	c.SuccessPossible = false
	from := Nth(dropFrom(*c)) + " write the page sends to an intercepted URL"
	c.What = "every request to an intercepted URL from the " + from + " on: 401, the session is gone"
	return Info{Hits: "every request to an intercepted URL from the " + from + " on", Receives: "401 " + TextSessionEnded, World: "keeps what was written before the drop, nothing after"}
}

func (sessionDrop) BrowserAnswer(Condition) BrowserAnswer {
	return BrowserAnswer{Status: 401, Body: errorBody(TextSessionEnded), How: "session ended: 401, not sent"}
}

// planSkill drops the session from the second call of the first tool the clean run wrote
// with twice: two writes or more are needed for a job to be half done.
func (sessionDrop) planSkill(run SkillRun) (tool, why string) {
	writes, twice := 0, ""
	for _, t := range run.Calls {
		if t.Effect != spec.EffectWrite {
			continue
		}
		writes += t.Calls
		if t.Calls >= 2 && twice == "" {
			twice = t.Tool
		}
	}
	switch {
	case writes >= 2 && twice != "":
		return twice, fmt.Sprintf("the clean run wrote %d times; the session drops from the second call to %s", writes, twice)
	case writes >= 2:
		return "", fmt.Sprintf("the clean run wrote %d times but with no tool twice, and a session drop starts at a tool's second call", writes)
	}
	return "", ""
}
