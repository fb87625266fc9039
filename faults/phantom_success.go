package faults

import (
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// phantomSuccess acknowledges a write and stores nothing.
type phantomSuccess struct{}

func init() { register(phantomSuccess{}) }

func (phantomSuccess) Name() string     { return "phantom_success" }
func (phantomSuccess) Eligible() string { return "tools that write" }

func (phantomSuccess) Variants(_ *spec.Spec, t spec.Tool) []string { return writeOnly(t) }

func (phantomSuccess) Describe(s *spec.Spec, t spec.Tool, c *Condition) Info {
	c.SuccessPossible = successPossible(s, t, c)
	c.What = hitsText(*c) + ": answered success, nothing stored"
	receives := "the tool's success reply " + world.SuccessText(t)
	if t.Server != "" {
		receives = "a real success reply of the tool, seen earlier (else {\"ok\": true}); not forwarded"
	}
	return Info{Hits: hitsText(*c), Receives: receives, World: "unchanged: the write is dropped"}
}

func (phantomSuccess) Hits(c Condition, pos Position) bool { return hitsAt(c, pos) }

func (phantomSuccess) Apply(c Condition, _ int64, req Request, w World) Outcome {
	return Outcome{Reply: fabricated(w, req), How: "acknowledged, not stored"}
}

func writeOnly(t spec.Tool) []string {
	if t.Effect == spec.EffectWrite {
		return []string{""}
	}
	return nil
}
