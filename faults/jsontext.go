package faults

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
)

// jnode is a JSON value together with where it lies in its text. Faults that damage a
// reply "as data" change one value in the real text and leave every other byte alone:
// key order, spacing and escapes stay as the server wrote them, so what the agent reads
// differs from the real reply only in the fault (a decode and re-encode would sort the
// keys, compact the spacing and turn & into \u0026).
type jnode struct {
	kind       byte // '{', '[', '"', '0' (number), 'b' (true/false), 'n' (null)
	start, end int  // the value's bytes: text[start:end]
	members    []jmember
	elems      []*jnode
	str        string  // a string's decoded value
	num        float64 // a number's value
}

// jmember is one key of an object, in the text's order.
type jmember struct {
	key      string
	keyStart int
	val      *jnode
}

// parseJSONText parses text into nodes; ok is false when text is not one JSON value.
func parseJSONText(text string) (*jnode, bool) {
	if !json.Valid([]byte(text)) {
		return nil, false
	}
	p := &jparser{s: text}
	n := p.value()
	return n, n != nil
}

type jparser struct {
	s string
	i int
}

func (p *jparser) ws() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

// value parses the value at p.i. The text is known to be valid JSON.
func (p *jparser) value() *jnode {
	p.ws()
	n := &jnode{start: p.i}
	switch c := p.s[p.i]; {
	case c == '{':
		n.kind = '{'
		p.i++
		for {
			p.ws()
			if p.s[p.i] == '}' {
				p.i++
				break
			}
			if p.s[p.i] == ',' {
				p.i++
				p.ws()
			}
			k := p.value()
			p.ws()
			p.i++ // ':'
			n.members = append(n.members, jmember{key: k.str, keyStart: k.start, val: p.value()})
		}
	case c == '[':
		n.kind = '['
		p.i++
		for {
			p.ws()
			if p.s[p.i] == ']' {
				p.i++
				break
			}
			if p.s[p.i] == ',' {
				p.i++
			}
			n.elems = append(n.elems, p.value())
		}
	case c == '"':
		n.kind = '"'
		p.i++
		for p.s[p.i] != '"' {
			if p.s[p.i] == '\\' {
				p.i++
			}
			p.i++
		}
		p.i++
		_ = json.Unmarshal([]byte(p.s[n.start:p.i]), &n.str)
	case c == 't' || c == 'f':
		n.kind = 'b'
		p.i += map[byte]int{'t': 4, 'f': 5}[c]
	case c == 'n':
		n.kind = 'n'
		p.i += 4
	default:
		n.kind = '0'
		for p.i < len(p.s) && strings.IndexByte("+-.eE0123456789", p.s[p.i]) >= 0 {
			p.i++
		}
		_ = json.Unmarshal([]byte(p.s[n.start:p.i]), &n.num)
	}
	n.end = p.i
	return n
}

// member returns the value under key, or nil.
func (n *jnode) member(key string) *jnode {
	for _, m := range n.members {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

// firstMember is the first key, in the text's order, whose name matches keep.
func (n *jnode) firstMember(keep func(key string, v *jnode) bool) (jmember, bool) {
	for _, m := range n.members {
		if keep(m.key, m.val) {
			return m, true
		}
	}
	return jmember{}, false
}

// edit replaces text[start:end] with text.
type edit struct {
	start, end int
	text       string
}

// applyEdits applies non-overlapping edits to s[base:base+len], offsets being in s.
func applyEdits(s string, from, to int, edits []edit) string {
	sort.Slice(edits, func(i, j int) bool { return edits[i].start < edits[j].start })
	var b strings.Builder
	at := from
	for _, e := range edits {
		b.WriteString(s[at:e.start])
		b.WriteString(e.text)
		at = e.end
	}
	b.WriteString(s[at:to])
	return b.String()
}

// jsonString encodes s as a JSON string the way servers and model APIs write it: without
// escaping <, > and &.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// removeMember is the edit that takes member i out of object n with its comma.
func removeMember(s string, n *jnode, i int) edit {
	m := n.members[i]
	if i+1 < len(n.members) {
		return edit{m.keyStart, n.members[i+1].keyStart, ""}
	}
	if i > 0 {
		return edit{n.members[i-1].val.end, m.val.end, ""}
	}
	return edit{m.keyStart, m.val.end, ""}
}

// elemSep is what goes between two elements of array n: the text between its first two,
// else a comma and the spacing before its first element.
func elemSep(s string, n *jnode) string {
	if len(n.elems) >= 2 {
		return s[n.elems[0].end:n.elems[1].start]
	}
	return "," + s[n.start+1:n.elems[0].start]
}
