package spec

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

var (
	nativeToolKeys  = []string{"name", "description", "input_schema", "effect", "key_field", "value_field", "key", "reply", "annotations"}
	hintKeys        = []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}
	nativeToolHints = map[string]string{"response": "reply"}
)

// toolName is what MCP allows in a tool name; it is also a path segment of the REST transport.
var toolName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// tools reads the tools list. replyKey is the key of the tool's reply: "reply" in a
// native spec, "response" in an Ajantik file.
func (d *decoder) tools(root, n *yaml.Node, known []string, replyKey string, hints map[string]string) []Tool {
	if n == nil {
		d.errorf(root, "tools is required: a spec needs at least one tool")
		return nil
	}
	if l := deref(n); isNull(l) || (l.Kind == yaml.SequenceNode && len(l.Content) == 0) {
		d.errorf(d.keyOf(n), "tools is empty: a spec needs at least one tool")
		return nil
	}
	var out []Tool
	first := map[string]int{}
	for it := range d.mappings(n, "tools", "tool", known, hints) {
		i, item, where, f := it.i, it.node, it.where, it.f
		t := Tool{
			Name:        d.text(f["name"], where+": name"),
			Description: d.text(f["description"], where+": description"),
			KeyField:    d.text(f["key_field"], where+": key_field"),
			ValueField:  d.text(f["value_field"], where+": value_field"),
			Key:         d.text(f["key"], where+": key"),
			Reply:       d.jsonText(f[replyKey], where+": "+replyKey),
		}
		switch e := d.text(f["effect"], where+": effect"); e {
		case "", "none":
			t.Effect = EffectNone
		case "read", "write":
			t.Effect = Effect(e)
		default:
			d.errorf(f["effect"], "%s: effect must be none, read or write, got %q", where, e)
			t.Effect = EffectNone
		}
		if t.Name == "" {
			d.errorf(item, "tool #%d has no name", i+1)
			continue
		}
		if !toolName.MatchString(t.Name) {
			d.errorf(f["name"], "tool name %q may only hold letters, digits, _, - and .", t.Name)
		}
		if line, ok := first[t.Name]; ok {
			d.errorf(f["name"], "tool %q is defined twice (first at line %d)", t.Name, line)
			continue
		}
		first[t.Name] = deref(f["name"]).Line
		t.InputSchema = d.inputSchema(f["input_schema"], t, where)
		t.Hints = d.hints(f["annotations"], where)
		out = append(out, t)
	}
	return out
}

// hints reads a tool's `annotations:`: MCP's hints, each true or false.
func (d *decoder) hints(n *yaml.Node, where string) *Hints {
	if isNull(deref(n)) {
		return nil
	}
	where += ": annotations"
	if deref(n).Kind != yaml.MappingNode {
		d.errorf(n, "%s must be a mapping of %s to true or false, got %s", where, strings.Join(hintKeys, ", "), got(n))
		return nil
	}
	f := d.fields(n, where, hintKeys, map[string]string{"readonly": "readOnlyHint", "read_only": "readOnlyHint", "destructive": "destructiveHint", "idempotent": "idempotentHint", "open_world": "openWorldHint"})
	flag := func(key string) *bool {
		v, ok := d.boolean(f[key], where+": "+key)
		if !ok {
			return nil
		}
		return &v
	}
	return &Hints{ReadOnly: flag("readOnlyHint"), Destructive: flag("destructiveHint"), Idempotent: flag("idempotentHint"), OpenWorld: flag("openWorldHint")}
}

// peek is the text under key in mapping n, without checking anything: it names an item
// in the messages about it.
func peek(n *yaml.Node, key string) string {
	if n == nil || n.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k, v := n.Content[i], deref(n.Content[i+1]); k.Value == key && v != nil && v.Kind == yaml.ScalarNode {
			return v.Value
		}
	}
	return ""
}

// itemWhere names the i-th item of a list in the messages about it: the noun and the
// item's key (condition "drop-1") when it has one, else the noun and its place
// (condition #2).
func itemWhere(item *yaml.Node, key, noun string, i int) string {
	if v := peek(item, key); v != "" {
		return fmt.Sprintf("%s %q", noun, v)
	}
	return fmt.Sprintf("%s #%d", noun, i+1)
}

// arguments are the arguments the world reads from a call to t: the key (unless the tool
// has a fixed key) for a read or a write, and the value for a write.
func (t Tool) arguments() []string {
	var args []string
	if t.Effect != EffectNone && t.Key == "" {
		args = append(args, t.KeyFieldName())
	}
	if t.Effect == EffectWrite {
		args = append(args, t.ValueFieldName())
	}
	return args
}

type stringProp struct {
	Type string `json:"type"`
}

// defaultSchema is the schema of a tool written without one: its arguments, as required strings.
func defaultSchema(t Tool) json.RawMessage {
	s := struct {
		Type       string                `json:"type"`
		Properties map[string]stringProp `json:"properties"`
		Required   []string              `json:"required,omitempty"`
	}{Type: "object", Properties: map[string]stringProp{}}
	for _, a := range t.arguments() {
		s.Properties[a] = stringProp{"string"}
		s.Required = append(s.Required, a)
	}
	b, _ := json.Marshal(s)
	return b
}

// inputSchema is the tool's JSON schema: as written, which must be an object schema that
// has the arguments the world reads, or the default one.
func (d *decoder) inputSchema(n *yaml.Node, t Tool, where string) json.RawMessage {
	n = deref(n)
	if isNull(n) {
		return defaultSchema(t)
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%s: input_schema must be an object schema (a mapping with type: object), got %s", where, got(n))
		return nil
	}
	var typ, props *yaml.Node
	for _, p := range d.pairs(n) {
		switch p.key.Value {
		case "type":
			typ = deref(p.val)
		case "properties":
			props = deref(p.val)
		}
	}
	if typ == nil || typ.Kind != yaml.ScalarNode || typ.Value != "object" {
		at := n
		if typ != nil {
			at = typ
		}
		d.errorf(at, "%s: input_schema must be an object schema (type: object), got type: %s", where, describeType(typ))
		return nil
	}
	if props != nil && props.Kind == yaml.MappingNode {
		for _, a := range t.arguments() {
			if peekKey(props, a) {
				continue
			}
			role := "key_field"
			if a == t.ValueFieldName() && t.Effect == EffectWrite && a != t.KeyFieldName() {
				role = "value_field"
			}
			d.errorf(props, "%s: input_schema has no property %q (the tool's %s)", where, a, role)
		}
	}
	raw, ok := d.toJSON(n, where+": input_schema")
	if !ok {
		return nil
	}
	return raw
}

func describeType(n *yaml.Node) string {
	if n == nil {
		return "nothing"
	}
	if n.Kind == yaml.ScalarNode {
		return n.Value
	}
	return got(n)
}

func peekKey(n *yaml.Node, key string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if deref(n.Content[i]) != nil && deref(n.Content[i]).Value == key {
			return true
		}
	}
	return false
}

// initialState is the world's starting state: a mapping of keys to values.
func (d *decoder) initialState(n *yaml.Node) map[string]any {
	n = deref(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "initial_state must be a mapping of keys to values, got %s", got(n))
		return nil
	}
	v, ok := d.value(n, "initial_state")
	if !ok {
		return nil
	}
	m, _ := v.(map[string]any)
	return m
}
