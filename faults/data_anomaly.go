package faults

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// dataAnomaly answers well-formed but wrong data, derived from the tool's reply:
// a cancelled or duplicate record, mixed units, a missing field, a stale date.
type dataAnomaly struct{}

// anomalyVariants are the kinds of data anomaly, derived from a tool's reply.
var anomalyVariants = []string{
	"cancelled_record",
	"duplicate_record",
	"mixed_units",
	"missing_field",
	"stale_date",
}

func init() {
	Register(Entry{
		Name: "data_anomaly", Rank: 90, Family: dataAnomaly{},
		Eligible: "tools with a fixed JSON reply (effect: none) that has records, units, numbers, strings or dates to disturb",
		Variants: dataAnomaly{}.variants,
		Kinds:    anomalyVariants,
		Describe: dataAnomaly{}.describe,
		Success: []SuccessRule{
			{"data_anomaly", "never, for a condition the spec writes with its own reply (its success_possible: false says otherwise)", never},
			{"data_anomaly.cancelled_record", "never: the result must not change", never},
			{"data_anomaly.duplicate_record", "never: count the record once", never},
			{"data_anomaly.mixed_units", "always: the right move is to report the mixed units", always},
			{"data_anomaly.missing_field", "when a state check needs the blanked value (its expected value holds it, or it holds the expected value)",
				func(s *spec.Spec, t spec.Tool, c *Condition) bool {
					d, ok := anomalyOf(world.SuccessText(t), "missing_field")
					return c.Reply == "" && ok && needed(s, d.was)
				}},
			{"data_anomaly.stale_date", "when the task needs the date to be current: a state check expects the date, or a task names its field or asks about it (when, date, today, current, recent, as of, due ...)",
				func(s *spec.Spec, t spec.Tool, c *Condition) bool {
					d, ok := anomalyOf(world.SuccessText(t), "stale_date")
					return c.Reply == "" && ok && (needed(s, d.was) || taskAsksDate(s, d.field))
				}},
		},
	})
}

func (dataAnomaly) variants(_ *spec.Spec, t spec.Tool) []string {
	if t.Effect != spec.EffectNone {
		return nil
	}
	var out []string
	for _, v := range anomalyVariants {
		if _, ok := Anomaly(world.SuccessText(t), v); ok {
			out = append(out, v)
		}
	}
	return out
}

func (dataAnomaly) describe(s *spec.Spec, t spec.Tool, c *Condition) Info {
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

func (dataAnomaly) Apply(ctx context.Context, c Condition, _ int64, req Request, w World) Outcome {
	real := w.Call(ctx, req.Tool, req.Args, world.Perform)
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
