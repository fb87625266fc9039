package spec

import (
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Ajantik scenario files load as they are. What maps where is in docs/spec.md.

// ajantikDefaultReply is what an Ajantik tool without a response answers.
const ajantikDefaultReply = `{"status": "ok"}`

var (
	ajantikKeys = []string{
		"skill", "status_field", "tools", "tasks", "initial_state", "faults", "auto_faults",
		"auto_faults_set", "output_contract", "failure_words", "success_words", "mcp_server",
	}
	ajantikToolKeys  = []string{"name", "description", "response", "effect", "key_field", "value_field", "input_schema"}
	ajantikToolHints = map[string]string{"reply": "response"}
	ajantikFaultKeys = []string{"id", "kind", "tool", "message", "response", "after", "success_possible", "description"}

	// nativeOnlyKeys tell a native spec that uses a tasks list from an Ajantik file.
	nativeOnlyKeys = []string{
		"name", "task", "checks", "state_checks", "agent", "conditions", "replicates", "seed",
		"axes", "limits", "claim", "workspace", "model", "outcomes", "servers", "probes",
	}
)

// isAjantik says whether root is an Ajantik scenario: it has skill: or auto_faults:, or a
// tasks: list and none of the keys only a native spec has.
func isAjantik(root *yaml.Node) bool {
	has := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k := deref(root.Content[i]); k != nil {
			has[k.Value] = true
		}
	}
	if has["skill"] || has["auto_faults"] {
		return true
	}
	return has["tasks"] && !slices.ContainsFunc(nativeOnlyKeys, func(k string) bool { return has[k] })
}

func (d *decoder) ajantik(root *yaml.Node) *Spec {
	f := d.fields(root, "", ajantikKeys, map[string]string{"conditions": "faults"})
	s := &Spec{Format: "ajantik", Replicates: 1, Seed: 1, Agent: Agent{Profile: "generic"}}
	if skill := d.text(f["skill"], "skill"); skill != "" {
		s.extra("skill", skill)
	}
	s.Tools = d.tools(root, f["tools"], ajantikToolKeys, "response", ajantikToolHints)
	for i, t := range s.Tools {
		if t.Reply == "" && t.Effect != EffectRead {
			s.Tools[i].Reply = ajantikDefaultReply
		}
	}
	s.InitialState = d.initialState(f["initial_state"])
	if f["tasks"] == nil {
		d.errorf(root, "tasks is required: what the agent is asked to do")
	} else {
		s.Tasks = d.tasks(f["tasks"])
	}
	s.Conditions = d.ajantikFaults(f["faults"], s.Tools)
	s.Faults = d.autoFaults(f["auto_faults"], s.Tools)
	s.FaultSet = d.faultSet(f["auto_faults_set"], "auto_faults_set")
	s.Claim = d.claim(f, "")
	if n := f["mcp_server"]; !isNull(deref(n)) {
		if raw, ok := d.toJSON(n, "mcp_server"); ok {
			s.extra("mcp_server", string(raw))
		}
	}
	return s
}

func (s *Spec) extra(key, value string) {
	if s.Extra == nil {
		s.Extra = map[string]string{}
	}
	s.Extra[key] = value
}

// ajantikFaults reads Ajantik's hand-written faults as conditions. Kind none is the clean
// condition, which every run has: it is not added.
func (d *decoder) ajantikFaults(n *yaml.Node, tools []Tool) []ConditionSpec {
	kinds := slices.Sorted(maps.Keys(ajantikKinds))
	var out []ConditionSpec
	ids := map[string]int{}
	for i, item := range d.list(n, "faults") {
		where := itemWhere(item, "id", "fault", i)
		f := d.fields(item, where, ajantikFaultKeys, map[string]string{"family": "kind", "reply": "response"})
		if item.Kind != yaml.MappingNode {
			continue
		}
		kind := d.text(f["kind"], where+": kind")
		if kind == "" {
			kind = "none"
		}
		k, ok := ajantikKinds[kind]
		if !ok {
			d.errorf(f["kind"], "%s: unknown fault kind %q%s", where, kind, suggest(kind, kinds))
			continue
		}
		c := ConditionSpec{
			ID:          d.text(f["id"], where+": id"),
			Family:      k.Family,
			Every:       k.Every,
			Tool:        d.text(f["tool"], where+": tool"),
			Reply:       d.jsonText(f["response"], where+": response"),
			Message:     d.text(f["message"], where+": message"),
			After:       d.count(f["after"], where+": after"),
			Description: d.text(f["description"], where+": description"),
			Line:        item.Line,
		}
		if v, ok := d.boolean(f["success_possible"], where+": success_possible"); ok {
			c.SuccessPossible = &v
		}
		if k.Family == "" {
			continue
		}
		d.checkTarget(c, where, item, f["tool"], nil, tools)
		if d.checkID(c.ID, "fault", i, item, f["id"], ids) {
			out = append(out, c)
		}
	}
	return out
}

// autoFaults reads auto_faults: Ajantik module names, mapped to families, or all.
func (d *decoder) autoFaults(n *yaml.Node, tools []Tool) []string {
	var known []string
	for m := range ajantikModules {
		if !strings.Contains(m, "-") {
			known = append(known, m)
		}
	}
	slices.Sort(known)
	known = append(known, "all")
	items := d.textNodes(n, "auto_faults", true)
	var out []string
	for _, item := range items {
		family, ok := ajantikModules[item.Value]
		switch {
		case item.Value == "all":
			family = "all"
		case !ok:
			d.errorf(item, "unknown fault module %q%s", item.Value, suggest(item.Value, known))
			continue
		}
		if slices.Contains(out, family) {
			continue
		}
		out = append(out, family)
		d.checkApplies(item, family, tools)
	}
	if slices.Contains(out, "all") {
		return []string{"all"}
	}
	return out
}
