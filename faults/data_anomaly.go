package faults

import (
	"fmt"

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

func (dataAnomaly) Describe(_ *spec.Spec, t spec.Tool, c *Condition) Info {
	c.Every = true
	info, known := anomalies[c.Variant]
	c.SuccessPossible = !known || info.possible
	if c.Reply != "" {
		c.What = hitsText(*c) + ": answered with the reply the spec gives"
		return Info{Hits: hitsText(*c), Receives: c.Reply, World: "unchanged (the tool does not write)"}
	}
	c.What = hitsText(*c) + ": " + info.what
	receives, _ := Anomaly(world.SuccessText(t), c.Variant)
	return Info{Hits: hitsText(*c), Receives: receives, World: "unchanged (the tool does not write)"}
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
