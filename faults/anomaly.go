package faults

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Which keys of a record play which part.
var (
	statusKey = regexp.MustCompile(`(?i)^(status|state|durum)$`)
	unitKey   = regexp.MustCompile(`(?i)^(currency|unit|para_birimi|birim)$`)
	dateKey   = regexp.MustCompile(`(?i)^(date|day|tarih|gun)$|_(at|date|tarih)$`)
	idKey     = regexp.MustCompile(`(?i)^(id|no|code|number|kod|numara)$|_id$`)
	isoDate   = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
)

// anomalyInfo is what one variant does and whether the task can still end right.
type anomalyInfo struct {
	what     string
	possible bool
}

var anomalies = map[string]anomalyInfo{
	"cancelled_record": {"a cancelled copy of a record is added to the list; the result must not change", true},
	"duplicate_record": {"one record arrives twice; it must be counted once", true},
	"mixed_units":      {"one record's unit is changed; it must not be added in without a word", false},
	"missing_field":    {"a field the answer needs is missing or empty; it must not be guessed", false},
	"stale_date":       {"the data is three days old; it must not be presented as current", false},
}

// Anomaly derives the variant's anomalous version of a JSON reply. ok is false when
// the reply has nothing the variant can work on.
func Anomaly(reply, variant string) (out string, ok bool) {
	var clean any
	if err := json.Unmarshal([]byte(reply), &clean); err != nil {
		return "", false
	}
	data := clone(clean)
	recs := records(data)
	switch variant {
	case "cancelled_record":
		if recs == nil {
			return "", false
		}
		first := (*recs)[0]
		sk := firstKey(first, statusKey, nil)
		if sk == "" {
			return "", false
		}
		extra := clone(first).(map[string]any)
		if ik := firstKey(first, idKey, nil); ik != "" {
			extra[ik] = fmt.Sprint(first[ik]) + "-X"
		}
		extra[sk] = "cancelled"
		*recs = append((*recs)[:1], append([]map[string]any{extra}, (*recs)[1:]...)...)
	case "duplicate_record":
		if recs == nil {
			return "", false
		}
		*recs = append(*recs, clone((*recs)[0]).(map[string]any))
	case "mixed_units":
		if recs == nil {
			return "", false
		}
		last := (*recs)[len(*recs)-1]
		uk := firstKey(last, unitKey, nil)
		if uk == "" {
			return "", false
		}
		other := "EUR"
		if strings.EqualFold(fmt.Sprint(last[uk]), "EUR") {
			other = "USD"
		}
		last[uk] = other
	case "missing_field":
		if recs != nil {
			first := (*recs)[0]
			nk := firstKey(first, nil, func(k string, v any) bool { _, num := v.(float64); return num && !idKey.MatchString(k) })
			if nk == "" {
				return "", false
			}
			delete(first, nk)
		} else {
			obj, isObj := data.(map[string]any)
			if !isObj {
				return "", false
			}
			k := firstKey(obj, nil, func(k string, v any) bool {
				s, str := v.(string)
				return str && s != "" && !dateKey.MatchString(k) && !idKey.MatchString(k)
			})
			if k == "" {
				return "", false
			}
			obj[k] = ""
		}
	case "stale_date":
		obj, isObj := data.(map[string]any)
		if !isObj {
			return "", false
		}
		k := firstKey(obj, dateKey, func(_ string, v any) bool { s, str := v.(string); return str && isoDate.MatchString(s) })
		if k == "" {
			return "", false
		}
		d, err := time.Parse("2006-01-02", obj[k].(string))
		if err != nil {
			return "", false
		}
		obj[k] = d.AddDate(0, 0, -3).Format("2006-01-02")
	default:
		return "", false
	}
	if recs != nil {
		// A top-level list is replaced, not changed in place: keep what setRecords returns.
		data = setRecords(data, *recs)
	}
	b, _ := json.Marshal(data)
	return string(b), true
}

// records finds the first list of objects in v (the records), depth first in key order.
func records(v any) *[]map[string]any {
	switch x := v.(type) {
	case []any:
		if len(x) == 0 {
			return nil
		}
		out := make([]map[string]any, 0, len(x))
		for _, e := range x {
			m, ok := e.(map[string]any)
			if !ok {
				return nil
			}
			out = append(out, m)
		}
		return &out
	case map[string]any:
		for _, k := range sortedKeys(x) {
			if r := records(x[k]); r != nil {
				return r
			}
		}
	}
	return nil
}

// setRecords writes recs back where records found them.
func setRecords(v any, recs []map[string]any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(recs))
		for i, r := range recs {
			out[i] = r
		}
		return out
	case map[string]any:
		for _, k := range sortedKeys(x) {
			if records(x[k]) != nil {
				x[k] = setRecords(x[k], recs)
				return x
			}
		}
	}
	return v
}

// firstKey is the first key (in sorted order) matching re and pred (either may be nil).
func firstKey(m map[string]any, re *regexp.Regexp, pred func(string, any) bool) string {
	for _, k := range sortedKeys(m) {
		if (re == nil || re.MatchString(k)) && (pred == nil || pred(k, m[k])) {
			return k
		}
	}
	return ""
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func clone(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}
