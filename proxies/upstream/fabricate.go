package upstream

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"

	"github.com/crashwall/chaos/world"
)

// adapt makes a fabricated success out of an earlier real one: where the earlier reply
// echoed an argument (create_entities answers the entities it created) it echoes this
// call's, and a text value of the earlier arguments that the reply repeats ("Successfully
// wrote to a.txt") becomes this call's value at the same place.
func adapt(prev exchange, args map[string]any) world.Reply {
	r := prev.reply
	r.IsError, r.Status = false, 200
	subs := substitutions(prev.args, args, nil)
	if r.Structured != "" {
		var st any
		if json.Unmarshal([]byte(r.Structured), &st) == nil {
			st = echo(st, prev.args, args, subs)
			if b, err := marshalLike(st, ""); err == nil {
				r.Structured = b
			}
		}
	}
	var tv any
	if json.Unmarshal([]byte(r.Text), &tv) == nil {
		tv = echo(tv, prev.args, args, subs)
		if b, err := marshalLike(tv, r.Text); err == nil {
			r.Text = b
		}
		return r
	}
	for _, s := range subs {
		r.Text = strings.ReplaceAll(r.Text, s[0], s[1])
	}
	return r
}

// substitutions are the (old, new) text values at the same place in the earlier and the
// present arguments, where they differ.
func substitutions(old, cur any, out [][2]string) [][2]string {
	switch o := old.(type) {
	case map[string]any:
		c, ok := cur.(map[string]any)
		if !ok {
			return out
		}
		for _, k := range sortedKeys(o) {
			out = substitutions(o[k], c[k], out)
		}
	case []any:
		c, ok := cur.([]any)
		if !ok {
			return out
		}
		for i := range min(len(o), len(c)) {
			out = substitutions(o[i], c[i], out)
		}
	case string:
		if c, ok := cur.(string); ok && c != o && len(o) >= 3 {
			out = append(out, [2]string{o, c})
		}
	}
	return out
}

// echo replaces, in a reply value, what equals an earlier argument with the present one,
// and a text equal to an earlier text argument with its present value.
func echo(v any, old, cur map[string]any, subs [][2]string) any {
	for _, k := range sortedKeys(old) {
		ov := old[k]
		switch ov.(type) {
		case map[string]any, []any: // a structure echoed whole; single values go by subs
		default:
			continue
		}
		if nv, ok := cur[k]; ok && reflect.DeepEqual(v, ov) {
			return nv
		}
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = echo(e, old, cur, subs)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = echo(e, old, cur, subs)
		}
		return out
	case string:
		for _, s := range subs {
			if x == s[0] {
				return s[1]
			}
		}
		for _, s := range subs {
			x = strings.ReplaceAll(x, s[0], s[1])
		}
		return x
	}
	return v
}

// marshalLike writes v as JSON, indented the way like is (compact when like is one line).
func marshalLike(v any, like string) (string, error) {
	indent := ""
	if i := strings.IndexByte(like, '\n'); i >= 0 {
		rest := like[i+1:]
		indent = rest[:len(rest)-len(strings.TrimLeft(rest, " \t"))]
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// sameArgs says whether two calls had the same arguments (as JSON values).
func sameArgs(a, b map[string]any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

func cloneArgs(m map[string]any) map[string]any {
	b, err := json.Marshal(m)
	if err != nil {
		return m
	}
	var out map[string]any
	if json.Unmarshal(b, &out) != nil {
		return m
	}
	return out
}
