package spec

import (
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// toolFamilies are the names of the registered tool families (FamilyCatalogue).
func toolFamilies() []string {
	if families == nil {
		return nil
	}
	return families.Families()
}

// knownFamily reports whether name is a registered family; every name is, when no
// catalogue is registered.
func knownFamily(name string) bool {
	return families == nil || slices.Contains(families.Families(), name)
}

// familyNeed is the effect a family's tool must have ("" : any): a fabricated write
// needs a tool that writes, a stale answer one that reads.
func familyNeed(family string) Effect {
	if families == nil {
		return ""
	}
	return families.Needs(family)
}

var effectVerb = map[Effect]string{EffectWrite: "writes", EffectRead: "reads"}

// families reads the native `faults:` list: family names, or [all].
func (d *decoder) families(n *yaml.Node, tools []Tool) []string {
	known := append(toolFamilies(), "all")
	items := d.textNodes(n, "faults", true)
	var out []string
	for _, item := range items {
		name := item.Value
		switch {
		case name != "all" && !knownFamily(name):
			d.errorf(item, "unknown fault family %q%s", name, suggest(name, known))
			continue
		case name == "all" && len(items) > 1:
			d.errorf(item, "faults: all already holds every family; list all alone or name the families")
			continue
		case slices.Contains(out, name):
			d.errorf(item, "fault family %q is listed twice", name)
			continue
		}
		out = append(out, name)
		d.checkApplies(item, name, tools)
	}
	return out
}

// checkApplies reports a family that no tool of the spec can take: a fault that cannot
// apply is an error, never a quiet no-op.
func (d *decoder) checkApplies(at *yaml.Node, family string, tools []Tool) {
	need := familyNeed(family)
	if need == "" || len(tools) == 0 || slices.ContainsFunc(tools, func(t Tool) bool { return t.Effect == need }) {
		return
	}
	d.errorf(at, "fault family %q applies to no tool: it needs a tool with effect: %s", family, need)
}

var conditionKeys = []string{
	"id", "family", "tool", "variant", "at", "every", "reply", "message", "success_possible", "description",
}

// conditions reads the native `conditions:` list of hand-written conditions.
func (d *decoder) conditions(n *yaml.Node, tools []Tool) []ConditionSpec {
	var out []ConditionSpec
	ids := map[string]int{}
	for i, item := range d.list(n, "conditions") {
		where := itemWhere(item, "id", "condition", i)
		f := d.fields(item, where, conditionKeys, map[string]string{"kind": "family", "response": "reply"})
		if item.Kind != yaml.MappingNode {
			continue
		}
		c := ConditionSpec{
			ID:          d.text(f["id"], where+": id"),
			Family:      d.text(f["family"], where+": family"),
			Tool:        d.text(f["tool"], where+": tool"),
			Variant:     d.text(f["variant"], where+": variant"),
			At:          d.count(f["at"], where+": at"),
			Reply:       d.jsonText(f["reply"], where+": reply"),
			Message:     d.text(f["message"], where+": message"),
			Description: d.text(f["description"], where+": description"),
			Line:        item.Line,
		}
		c.Every, _ = d.boolean(f["every"], where+": every")
		if v, ok := d.boolean(f["success_possible"], where+": success_possible"); ok {
			c.SuccessPossible = &v
		}
		switch {
		case c.Family == "":
			d.errorf(item, "%s: family is required (one of %s)", where, strings.Join(toolFamilies(), ", "))
		case !knownFamily(c.Family):
			d.errorf(f["family"], "%s: unknown fault family %q%s", where, c.Family, suggest(c.Family, toolFamilies()))
		default:
			d.checkTarget(c, where, item, f["tool"], f["variant"], tools)
		}
		if d.checkID(c.ID, "condition", i, item, f["id"], ids) {
			out = append(out, c)
		}
	}
	return out
}

// checkID reports a missing, reserved or repeated condition id, and says whether the
// condition can be kept.
func (d *decoder) checkID(id, noun string, i int, item, at *yaml.Node, ids map[string]int) bool {
	switch {
	case id == "":
		d.errorf(item, "%s #%d has no id", noun, i+1)
		return false
	case id == "clean":
		d.errorf(at, "%s id \"clean\" is taken by the condition without a fault; choose another", noun)
		return false
	}
	if line, ok := ids[id]; ok {
		d.errorf(at, "%s %q is defined twice (first at line %d)", noun, id, line)
		return false
	}
	ids[id] = item.Line
	return true
}

// checkTarget reports a condition whose tool does not exist or cannot take its family,
// and an anomaly variant that is not known.
func (d *decoder) checkTarget(c ConditionSpec, where string, item, toolAt, variantAt *yaml.Node, tools []Tool) {
	if c.Variant != "" && families != nil {
		kinds := families.Variants(c.Family)
		switch {
		case kinds == nil:
			var with []string
			for _, f := range families.Families() {
				if families.Variants(f) != nil {
					with = append(with, f)
				}
			}
			d.errorf(variantAt, "%s: variant applies only to %s, not %s", where, strings.Join(with, ", "), c.Family)
		case !slices.Contains(kinds, c.Variant):
			d.errorf(variantAt, "%s: unknown %s variant %q%s", where, c.Family, c.Variant, suggest(c.Variant, kinds))
		}
	}
	if len(tools) == 0 {
		return // the tools list has its own problem
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	if c.Tool == "" {
		d.errorf(item, "%s: tool is required (one of %s)", where, strings.Join(names, ", "))
		return
	}
	i := slices.Index(names, c.Tool)
	if i < 0 {
		d.errorf(toolAt, "%s: unknown tool %q%s", where, c.Tool, suggest(c.Tool, names))
		return
	}
	if need := familyNeed(c.Family); need != "" && tools[i].Effect != need {
		d.errorf(toolAt, "%s: %s needs a tool that %s; %q has effect: %s", where, c.Family, effectVerb[need], c.Tool, tools[i].Effect)
	}
}
