package spec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// decoder walks a yaml.Node tree and collects problems instead of stopping at the first.
// Every helper takes a possibly nil node (the key was absent) and reports against the
// node's line.
type decoder struct {
	file  string
	probs []Problem
	// budget is how many nodes may still be visited; it stops a file whose aliases expand
	// to something huge (a "billion laughs") from taking the process down.
	budget int
	// overBudget is the budget problem, once reported. Past it the walk sees only part of
	// the file, so every other problem it found may be untrue: Parse reports this one alone.
	overBudget *Problem
	// keys maps a value that fields returned to its key, for problems with a whole section.
	keys map[*yaml.Node]*yaml.Node
}

const (
	nodeBudget = 1 << 20
	maxDepth   = 64
)

func (d *decoder) errorf(n *yaml.Node, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	d.probs = append(d.probs, Problem{File: d.file, Line: line, Msg: fmt.Sprintf(format, args...)})
}

// spend takes one node from the budget and says whether there was one left.
func (d *decoder) spend(n *yaml.Node) bool {
	d.budget--
	if d.budget >= 0 {
		return true
	}
	if d.overBudget == nil {
		d.errorf(n, "the spec is too large once its aliases are expanded")
		p := d.probs[len(d.probs)-1]
		d.overBudget = &p
	}
	return false
}

// deref follows an alias to the node it names.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < maxDepth; i++ {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.AliasNode {
		return nil
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// got describes a node for "x must be y, got z".
func got(n *yaml.Node) string {
	switch {
	case n == nil:
		return "nothing"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case isNull(n):
		return "nothing"
	}
	return strconv.Quote(n.Value)
}

type pair struct{ key, val *yaml.Node }

// pairs are the entries of mapping n in file order, with merge keys (<<) expanded in place.
// An explicit key wins over a merged one, as YAML says; a key given twice is reported.
func (d *decoder) pairs(n *yaml.Node) []pair { return d.resolve(n, nil, true) }

// resolve is pairs for n. open holds the mappings being merged, so that a mapping that
// merges itself is an error and not an endless loop. Repeated keys are reported only when
// report is set: a merged mapping is reported where it is written.
func (d *decoder) resolve(n *yaml.Node, open []*yaml.Node, report bool) []pair {
	if slices.Contains(open, n) {
		d.errorf(n, "a merge (<<) refers to the mapping it is in")
		return nil
	}
	if len(open) > maxDepth {
		d.errorf(n, "merges (<<) nest too deep")
		return nil
	}
	open = append(open, n)
	var entries []pair
	explicit := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), n.Content[i+1]
		if !d.spend(n.Content[i]) {
			return nil
		}
		if k == nil || k.Kind != yaml.ScalarNode {
			if report {
				d.errorf(n.Content[i], "keys must be text, got %s", got(k))
			}
			continue
		}
		if k.ShortTag() == "!!merge" {
			for _, src := range d.mergeSources(k, v) {
				entries = append(entries, d.resolve(src, open, false)...)
			}
			continue
		}
		if f, ok := explicit[k.Value]; ok {
			if report {
				d.errorf(k, "key %q given twice (first at line %d)", k.Value, f.Line)
			}
			continue
		}
		explicit[k.Value] = k
		entries = append(entries, pair{k, v})
	}
	seen := map[string]bool{}
	out := make([]pair, 0, len(entries))
	for _, p := range entries {
		if f, ok := explicit[p.key.Value]; (ok && f != p.key) || seen[p.key.Value] {
			continue // a merged entry lost to an explicit one or to an earlier merge
		}
		seen[p.key.Value] = true
		out = append(out, p)
	}
	return out
}

// mergeSources are the mappings a merge key (<<) names: one, or a list of them.
func (d *decoder) mergeSources(k, v *yaml.Node) []*yaml.Node {
	v = deref(v)
	var sources []*yaml.Node
	switch {
	case v != nil && v.Kind == yaml.MappingNode:
		return []*yaml.Node{v}
	case v != nil && v.Kind == yaml.SequenceNode:
		for _, item := range v.Content {
			if src := deref(item); src != nil && src.Kind == yaml.MappingNode {
				sources = append(sources, src)
			} else {
				d.errorf(k, "<< must be followed by a mapping or a list of mappings, got %s in the list", got(src))
			}
		}
		return sources
	}
	d.errorf(k, "<< must be followed by a mapping or a list of mappings, got %s", got(v))
	return nil
}

// fields checks that n is a mapping whose keys are all known, and returns its values by
// key. A null node is an empty mapping. Keys starting with "x-" are ignored: they are a
// place for YAML anchors. hints maps a key that belongs elsewhere to the right one.
func (d *decoder) fields(n *yaml.Node, where string, known []string, hints map[string]string) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	n = deref(n)
	if isNull(n) {
		return out
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%s must be a mapping, got %s", where, got(n))
		return out
	}
	in := ""
	if where != "" {
		in = " in " + where
	}
	for _, p := range d.pairs(n) {
		k := p.key.Value
		switch {
		case strings.HasPrefix(k, "x-"):
		case slices.Contains(known, k):
			out[k] = p.val
			if d.keys == nil {
				d.keys = map[*yaml.Node]*yaml.Node{}
			}
			d.keys[p.val] = p.key
		case hints[k] != "":
			d.errorf(p.key, "unknown key %q%s (did you mean %s?)", k, in, hints[k])
		default:
			if m, ok := closest(k, known); ok {
				d.errorf(p.key, "unknown key %q%s (did you mean %s?)", k, in, m)
			} else {
				d.errorf(p.key, "unknown key %q%s (known: %s)", k, in, strings.Join(known, ", "))
			}
		}
	}
	return out
}

// keyOf is the key a value was written under, or the value itself.
func (d *decoder) keyOf(n *yaml.Node) *yaml.Node {
	if k := d.keys[n]; k != nil {
		return k
	}
	return n
}

// text is a scalar's text ("" when absent or null).
func (d *decoder) text(n *yaml.Node, what string) string {
	n = deref(n)
	if isNull(n) {
		return ""
	}
	if n.Kind != yaml.ScalarNode {
		d.errorf(n, "%s must be text, got %s", what, got(n))
		return ""
	}
	return n.Value
}

// taskText is a task's text: a NUL in it is refused here, at load, because no program
// can be given one in its arguments or environment and every trial would fail with it.
func (d *decoder) taskText(n *yaml.Node, what string) string {
	s := d.text(n, what)
	if i := strings.IndexByte(s, 0); i >= 0 {
		d.errorf(deref(n), "%s holds a NUL byte (at character %d), which no program can be given in its arguments or environment; remove it", what, utf8.RuneCountInString(s[:i])+1)
	}
	return s
}

// whole is a whole number; ok is false when it is absent or wrong.
func (d *decoder) whole(n *yaml.Node, what string) (v int64, ok bool) {
	n = deref(n)
	if isNull(n) {
		return 0, false
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&v) != nil {
		d.errorf(n, "%s must be a whole number, got %s", what, got(n))
		return 0, false
	}
	return v, true
}

// count is a whole number that is 0 or more.
func (d *decoder) count(n *yaml.Node, what string) int {
	v, ok := d.whole(n, what)
	if !ok {
		return 0
	}
	if msg := ConcurrencyProblem(what, v); msg != "" {
		d.errorf(n, "%s", msg)
		return 0
	}
	return int(v)
}

func (d *decoder) boolean(n *yaml.Node, what string) (v bool, ok bool) {
	n = deref(n)
	if isNull(n) {
		return false, false
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&v) != nil {
		d.errorf(n, "%s must be true or false, got %s", what, got(n))
		return false, false
	}
	return v, true
}

func (d *decoder) duration(n *yaml.Node, what string) Duration {
	n = deref(n)
	if isNull(n) {
		return 0
	}
	v, err := time.ParseDuration(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil {
		d.errorf(n, `%s must be a duration such as "90s" or "5m", got %s`, what, got(n))
		return 0
	}
	if v < 0 {
		d.errorf(n, "%s must not be negative, got %s", what, got(n))
		return 0
	}
	return Duration(v)
}

// list is the items of a sequence (nil when absent or null).
func (d *decoder) list(n *yaml.Node, what string) []*yaml.Node {
	n = deref(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, "%s must be a list, got %s", what, got(n))
		return nil
	}
	items := make([]*yaml.Node, 0, len(n.Content))
	for _, item := range n.Content {
		if it := deref(item); it != nil {
			items = append(items, it)
		}
	}
	return items
}

// texts is a list of text; a single scalar is taken as a list of one when one is true.
func (d *decoder) texts(n *yaml.Node, what string, one bool) []string {
	var out []string
	for _, item := range d.textNodes(n, what, one) {
		out = append(out, item.Value)
	}
	return out
}

// textNodes is texts, keeping each item's node for messages about it.
func (d *decoder) textNodes(n *yaml.Node, what string, one bool) []*yaml.Node {
	n = deref(n)
	if one && n != nil && n.Kind == yaml.ScalarNode && !isNull(n) {
		return []*yaml.Node{n}
	}
	var out []*yaml.Node
	for _, item := range d.list(n, what) {
		if item.Kind != yaml.ScalarNode || isNull(item) {
			d.errorf(item, "%s must be a list of text, got %s in it", what, got(item))
			continue
		}
		out = append(out, item)
	}
	return out
}

// jsonText is a value as JSON text: a scalar is kept as written (a reply is often JSON
// already, in quotes), a mapping or list is written as compact JSON in file order.
func (d *decoder) jsonText(n *yaml.Node, what string) string {
	n = deref(n)
	if isNull(n) {
		return ""
	}
	if n.Kind == yaml.ScalarNode {
		return n.Value
	}
	raw, ok := d.toJSON(n, what)
	if !ok {
		return ""
	}
	return string(raw)
}

// value is a node as the Go value JSON would give (map[string]any, []any, float64, ...),
// so a spec holds the same values before and after it travels as JSON.
func (d *decoder) value(n *yaml.Node, what string) (any, bool) {
	raw, ok := d.toJSON(n, what)
	if !ok {
		return nil, false
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		d.errorf(n, "%s: %v", what, err)
		return nil, false
	}
	return v, true
}

type nodeError struct {
	n   *yaml.Node
	msg string
}

// toJSON writes n as compact JSON, keys in file order.
func (d *decoder) toJSON(n *yaml.Node, what string) (json.RawMessage, bool) {
	var b bytes.Buffer
	if e := d.writeJSON(&b, n, nil); e != nil {
		if e.msg != "" {
			d.errorf(e.n, "%s: %s", what, e.msg)
		}
		return nil, false
	}
	return b.Bytes(), true
}

// writeJSON writes n to b. open holds the nodes being written, so that an alias to one of
// them is reported and not followed forever. A nodeError with no message means the problem
// was reported already.
func (d *decoder) writeJSON(b *bytes.Buffer, n *yaml.Node, open []*yaml.Node) *nodeError {
	if n == nil {
		b.WriteString("null")
		return nil
	}
	if !d.spend(n) {
		return &nodeError{n: n}
	}
	if len(open) > maxDepth {
		return &nodeError{n, "nested too deep"}
	}
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias == nil || slices.Contains(open, n.Alias) {
			return &nodeError{n, fmt.Sprintf("alias *%s refers to a value that holds it", n.Value)}
		}
		return d.writeJSON(b, n.Alias, open)
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			b.WriteString("null")
			return nil
		}
		return d.writeJSON(b, n.Content[0], open)
	case yaml.MappingNode:
		open = append(open, n)
		b.WriteByte('{')
		for i, p := range d.pairs(n) {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(p.key.Value)
			b.Write(k)
			b.WriteByte(':')
			if e := d.writeJSON(b, p.val, open); e != nil {
				return e
			}
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		open = append(open, n)
		b.WriteByte('[')
		for i, item := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if e := d.writeJSON(b, item, open); e != nil {
				return e
			}
		}
		b.WriteByte(']')
	case yaml.ScalarNode:
		return scalarJSON(b, n)
	default:
		return &nodeError{n, "unexpected YAML node"}
	}
	return nil
}

func scalarJSON(b *bytes.Buffer, n *yaml.Node) *nodeError {
	var out []byte
	var err error
	switch n.ShortTag() {
	case "!!null":
		out = []byte("null")
	case "!!bool":
		var v bool
		if err = n.Decode(&v); err == nil {
			out, err = json.Marshal(v)
		}
	case "!!int":
		var v any
		if err = n.Decode(&v); err == nil {
			out, err = json.Marshal(v)
		}
	case "!!float":
		var v float64
		if err = n.Decode(&v); err == nil {
			if math.IsInf(v, 0) || math.IsNaN(v) {
				return &nodeError{n, fmt.Sprintf("%q is not a number JSON can hold", n.Value)}
			}
			out, err = json.Marshal(v)
		}
	default:
		out, err = json.Marshal(n.Value)
	}
	if err != nil {
		return &nodeError{n, strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	b.Write(out)
	return nil
}

// listItem is one mapping of a list of mappings (tools:, servers:, scripts:): its index,
// its node, where it is for messages and its fields by key.
type listItem struct {
	i     int
	node  *yaml.Node
	where string
	f     map[string]*yaml.Node
}

// mappings yields each mapping of the list n (what names the list in messages): `NOUN
// "NAME"` when the item has a name, else `NOUN #I`, as where; its fields checked against
// known (hints as fields takes them). An item that is not a mapping is reported by fields
// and skipped. Lazily, so that each item's problems come in the order they always did.
func (d *decoder) mappings(n *yaml.Node, what, noun string, known []string, hints map[string]string) iter.Seq[listItem] {
	return func(yield func(listItem) bool) {
		for i, item := range d.list(n, what) {
			where := itemWhere(item, "name", noun, i)
			f := d.fields(item, where, known, hints)
			if item.Kind != yaml.MappingNode {
				continue
			}
			if !yield(listItem{i: i, node: item, where: where, f: f}) {
				return
			}
		}
	}
}
