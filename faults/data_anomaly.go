package faults

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// dataAnomaly answers well-formed but wrong data, derived from the tool's reply:
// a cancelled or duplicate record, mixed units, a missing field, a stale date.
type dataAnomaly struct{}

func init() { register(dataAnomaly{}) }

func (dataAnomaly) Name() string { return "data_anomaly" }
func (dataAnomaly) Eligible() string {
	return "tools with a fixed JSON reply (effect: none) that has records, units, numbers, strings or dates to disturb"
}

func (dataAnomaly) Variants(_ *spec.Spec, t spec.Tool) []string {
	if t.Effect != spec.EffectNone {
		return nil
	}
	var out []string
	for _, v := range spec.AnomalyVariants {
		if _, ok := Anomaly(world.SuccessText(t), v); ok {
			out = append(out, v)
		}
	}
	return out
}

func (dataAnomaly) Describe(s *spec.Spec, t spec.Tool, c *Condition) Info {
	c.Every = true
	info := anomalies[c.Variant]
	c.SuccessPossible = successPossible(s, t, c)
	if c.Reply != "" {
		c.What = hitsText(*c) + ": answered with the reply the spec gives"
		return Info{Hits: hitsText(*c), Receives: c.Reply, World: "unchanged (the tool does not write)"}
	}
	c.What = hitsText(*c) + ": " + info.what
	if c.Variant == "missing_field" {
		if f := describeMissing(world.SuccessText(t)); f != "" {
			c.What += " (" + f + ")"
		}
	}
	receives, _ := Anomaly(world.SuccessText(t), c.Variant)
	return Info{Hits: hitsText(*c), Receives: receives, World: "unchanged (the tool does not write)"}
}

// dateWords are what a task says when it needs a date to be current.
var dateWords = regexp.MustCompile(`(?i)\b(date[sd]?|when|today|current(ly)?|recent(ly)?|how old|up to date|as of|deadline|due)\b`)

// taskAsksDate reports whether a task of s asks about a date: names the date's field, or
// uses a word that needs the date to be current.
func taskAsksDate(s *spec.Spec, field string) bool {
	if s == nil {
		return false
	}
	for _, t := range s.Tasks {
		if dateWords.MatchString(t.Prompt) || (field != "" && regexp.MustCompile(`(?i)\b`+regexp.QuoteMeta(field)+`\b`).MatchString(t.Prompt)) {
			return true
		}
	}
	return false
}

// needed reports whether a state check of s needs value: what the check expects (its
// equals or contains) holds the value's text, or the value holds what it expects (an
// email body that says "urgent" when the check wants priority urgent).
func needed(s *spec.Spec, value string) bool {
	if s == nil || value == "" {
		return false
	}
	for _, sc := range s.AllStateChecks() {
		want := sc.Contains
		if sc.Equals != nil {
			want = fmt.Sprint(sc.Equals)
		}
		w, v := strings.ToLower(want), strings.ToLower(value)
		if w != "" && (strings.Contains(w, v) || strings.Contains(v, w)) {
			return true
		}
	}
	return false
}

func (dataAnomaly) Hits(c Condition, pos Position) bool {
	c.Every = true
	return hitsAt(c, pos)
}

func (dataAnomaly) Apply(c Condition, _ int64, req Request, w World) Outcome {
	real := w.Call(req.Tool, req.Args, world.Perform)
	out := real
	if c.Reply != "" {
		out = world.OK(c.Reply)
	} else if text, ok := Anomaly(real.Text, c.Variant); ok {
		out.Text = text
	} else {
		return Outcome{Real: real, Performed: true, Err: fmt.Errorf("data anomaly %s cannot apply to this reply of %s", c.Variant, req.Tool.Name)}
	}
	return Outcome{Reply: out, Real: real, Performed: true, How: "data anomaly: " + c.Variant}
}
