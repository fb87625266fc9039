package faults

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Which keys of a record play which part: Ajantik's patterns, so that a scenario of
// Ajantik's gets its anomalies on the same fields.
var (
	statusKey = regexp.MustCompile(`(?i)^(status|state|durum)$`)
	unitKey   = regexp.MustCompile(`(?i)^(currency|unit|para_birimi|birim)$`)
	dateKey   = regexp.MustCompile(`(?i)^(date|day|tarih|gun)$|_(at|date|tarih)$`)
	idKey     = regexp.MustCompile(`(?i)^(id|no|code|number|kod|numara)$`)
	isoDate   = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
)

// anomalyInfo is what one variant does (whether the task can still end right is its
// success rule: possible.go).
type anomalyInfo struct {
	what string
}

var anomalies = map[string]anomalyInfo{
	"cancelled_record": {"a cancelled copy of a record is added to the list; the result must not change"},
	"duplicate_record": {"one record arrives twice; it must be counted once"},
	"mixed_units":      {"one record's unit is changed; it must not be added in without a word"},
	"missing_field":    {"a field is missing or empty; it must not be guessed"},
	"stale_date":       {"the data is three days old; it must not be presented as current"},
}

// damage is an anomaly derived from one reply: the damaged text, and for missing_field
// the field taken out and the value it had.
type damage struct {
	text  string
	field string
	was   string
}

// Anomaly derives the variant's anomalous version of a JSON reply. ok is false when
// the reply has nothing the variant can work on. Only the damaged value changes: the
// rest of the text is the reply's own bytes.
func Anomaly(reply, variant string) (out string, ok bool) {
	d, ok := anomalyOf(reply, variant)
	return d.text, ok
}

// anomalyOf picks the fields as Ajantik does (anomalies.generate): keys in the reply's
// own order, the records being the first list of objects met depth first.
func anomalyOf(reply, variant string) (damage, bool) {
	root, ok := parseJSONText(reply)
	if !ok {
		return damage{}, false
	}
	recs := records(root)
	var first *jnode
	var recID string
	if recs != nil {
		first = recs.elems[0]
		if m, ok := first.firstMember(func(k string, _ *jnode) bool { return idKey.MatchString(k) }); ok {
			recID = m.key
		}
	}
	whole := func(edits ...edit) (damage, bool) {
		return damage{text: applyEdits(reply, 0, len(reply), edits)}, true
	}
	switch variant {
	case "cancelled_record":
		if recs == nil {
			return damage{}, false
		}
		sk, ok := first.firstMember(func(k string, _ *jnode) bool { return statusKey.MatchString(k) })
		if !ok {
			return damage{}, false
		}
		cancelled := "cancelled"
		if strings.EqualFold(sk.key, "durum") {
			cancelled = "iptal" // Ajantik: a Turkish status key gets a Turkish value
		}
		edits := []edit{{sk.val.start, sk.val.end, jsonString(cancelled)}}
		if recID != "" {
			id := first.member(recID)
			edits = append(edits, edit{id.start, id.end, jsonString(plainText(reply, id) + "-X")})
		}
		extra := applyEdits(reply, first.start, first.end, edits)
		return whole(edit{first.end, first.end, elemSep(reply, recs) + extra})
	case "duplicate_record":
		if recs == nil {
			return damage{}, false
		}
		last := recs.elems[len(recs.elems)-1]
		return whole(edit{last.end, last.end, elemSep(reply, recs) + reply[first.start:first.end]})
	case "mixed_units":
		if recs == nil {
			return damage{}, false
		}
		uk, ok := first.firstMember(func(k string, _ *jnode) bool { return unitKey.MatchString(k) })
		if !ok {
			return damage{}, false
		}
		v := recs.elems[len(recs.elems)-1].member(uk.key)
		if v == nil {
			return damage{}, false
		}
		other := "EUR"
		if strings.EqualFold(plainText(reply, v), "EUR") {
			other = "USD"
		}
		return whole(edit{v.start, v.end, jsonString(other)})
	case "missing_field":
		if recs != nil {
			// A record loses its first number that is not its id.
			for i, m := range first.members {
				if m.val.kind == '0' && m.key != recID {
					d, _ := whole(removeMember(reply, first, i))
					d.field, d.was = m.key, plainText(reply, m.val)
					return d, true
				}
			}
			return damage{}, false
		}
		if root.kind != '{' {
			return damage{}, false
		}
		// An object's first non-empty text is emptied; the date that stale_date ages is
		// left to stale_date (where there is one Ajantik makes no missing_field at all).
		stale := staleDateKey(root)
		m, ok := root.firstMember(func(k string, v *jnode) bool { return v.kind == '"' && v.str != "" && k != stale })
		if !ok {
			return damage{}, false
		}
		d, _ := whole(edit{m.val.start, m.val.end, `""`})
		d.field, d.was = m.key, m.val.str
		return d, true
	case "stale_date":
		if root.kind != '{' {
			return damage{}, false
		}
		k := staleDateKey(root)
		if k == "" {
			return damage{}, false
		}
		v := root.member(k)
		d, err := time.Parse("2006-01-02", v.str)
		if err != nil {
			return damage{}, false
		}
		dm, _ := whole(edit{v.start, v.end, jsonString(d.AddDate(0, 0, -3).Format("2006-01-02"))})
		dm.field, dm.was = k, v.str
		return dm, true
	}
	return damage{}, false
}

// staleDateKey is the first key of an object that holds an ISO date under a date-like name.
func staleDateKey(obj *jnode) string {
	m, _ := obj.firstMember(func(k string, v *jnode) bool {
		return dateKey.MatchString(k) && v.kind == '"' && isoDate.MatchString(v.str)
	})
	return m.key
}

// plainText is a value as text: a string's own value, anything else as written.
func plainText(s string, n *jnode) string {
	if n.kind == '"' {
		return n.str
	}
	if n.kind == '0' {
		return strconv.FormatFloat(n.num, 'f', -1, 64)
	}
	return s[n.start:n.end]
}

// records finds the first non-empty list of objects in v (the records), depth first in
// the reply's key order.
func records(n *jnode) *jnode {
	switch n.kind {
	case '[':
		if len(n.elems) == 0 {
			return nil
		}
		for _, e := range n.elems {
			if e.kind != '{' {
				return nil
			}
		}
		return n
	case '{':
		for _, m := range n.members {
			if r := records(m.val); r != nil {
				return r
			}
		}
	}
	return nil
}

// describeMissing says which field missing_field takes out of reply, for `chaos faults`.
func describeMissing(reply string) string {
	d, ok := anomalyOf(reply, "missing_field")
	if !ok {
		return ""
	}
	if d.was == "" {
		return fmt.Sprintf("field %q", d.field)
	}
	return fmt.Sprintf("field %q, was %s", d.field, d.was)
}
