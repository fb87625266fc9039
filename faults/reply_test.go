package faults

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAnomaly(t *testing.T) {
	// Only the damaged value changes: keys keep the reply's order (Ajantik picks fields in
	// the file's order too), spacing and escapes are the reply's own bytes.
	const (
		a1 = `{"id":"A1","status":"open","amount":12.5,"currency":"USD"}`
		a2 = `{"id":"A2","status":"open","amount":3,"currency":"USD"}`
	)
	tests := []struct {
		variant string
		reply   string
		want    string
		ok      bool
	}{
		{"cancelled_record", ordersReply, `{"orders":[` + a1 + `,{"id":"A1-X","status":"cancelled","amount":12.5,"currency":"USD"},` + a2 + `],"date":"2026-11-02"}`, true},
		{"duplicate_record", ordersReply, `{"orders":[` + a1 + `,` + a2 + `,` + a1 + `],"date":"2026-11-02"}`, true},
		{"mixed_units", ordersReply, `{"orders":[` + a1 + `,{"id":"A2","status":"open","amount":3,"currency":"EUR"}],"date":"2026-11-02"}`, true},
		{"missing_field", ordersReply, `{"orders":[{"id":"A1","status":"open","currency":"USD"},` + a2 + `],"date":"2026-11-02"}`, true},
		{"stale_date", ordersReply, `{"orders":[` + a1 + `,` + a2 + `],"date":"2026-10-30"}`, true},

		// A bare list of records, EUR becoming USD, a date across a month.
		{"mixed_units", `[{"unit":"EUR","qty":1},{"unit":"EUR","qty":2}]`, `[{"unit":"EUR","qty":1},{"unit":"USD","qty":2}]`, true},
		// order_id is not an id to Ajantik (^id$, ^no$, ^code$, ...): the copy keeps it.
		{"cancelled_record", `[{"order_id":7,"state":"paid"}]`, `[{"order_id":7,"state":"paid"},{"order_id":7,"state":"cancelled"}]`, true},
		{"cancelled_record", `[{"no":7,"durum":"açık"}]`, `[{"no":7,"durum":"açık"},{"no":"7-X","durum":"iptal"}]`, true},
		{"stale_date", `{"created_at":"2026-03-01","n":1}`, `{"created_at":"2026-02-26","n":1}`, true},
		// Records nested in an object inside an object.
		{"duplicate_record", `{"page":{"items":[{"id":1}]},"total":1}`, `{"page":{"items":[{"id":1},{"id":1}]},"total":1}`, true},
		// No records: missing_field empties the first non-empty text in the file's order,
		// other than the date stale_date ages.
		{"missing_field", `{"ticket":"T-1","body":"hi","date":"2026-11-02"}`, `{"ticket":"","body":"hi","date":"2026-11-02"}`, true},
		{"missing_field", `{"date":"2026-11-02","amount":"42.50","currency":"USD"}`, `{"date":"2026-11-02","amount":"","currency":"USD"}`, true},
		{"missing_field", `{"id":"A1","date":"2026-11-02"}`, `{"id":"","date":"2026-11-02"}`, true},
		// The record's number is removed with its comma, whatever its place.
		{"missing_field", `[{"id":"A1","qty":2}]`, `[{"id":"A1"}]`, true},
		{"missing_field", `[{"qty":2}]`, `[{}]`, true},

		// Spacing, key order and escapes are the reply's: an indented reply stays indented,
		// & stays & (Go's encoder would write \u0026), \/ stays \/.
		{"duplicate_record", "{\n  \"items\": [\n    {\"name\": \"A & B\", \"url\": \"a\\/b\"}\n  ]\n}",
			"{\n  \"items\": [\n    {\"name\": \"A & B\", \"url\": \"a\\/b\"},\n    {\"name\": \"A & B\", \"url\": \"a\\/b\"}\n  ]\n}", true},
		{"mixed_units", "[\n  {\"z\": 1, \"currency\": \"USD\", \"note\": \"<b>&</b>\"},\n  {\"z\": 2, \"currency\": \"USD\", \"note\": \"<b>&</b>\"}\n]",
			"[\n  {\"z\": 1, \"currency\": \"USD\", \"note\": \"<b>&</b>\"},\n  {\"z\": 2, \"currency\": \"EUR\", \"note\": \"<b>&</b>\"}\n]", true},
		{"missing_field", "{\n  \"title\": \"Fish & Chips\",\n  \"price\": 9\n}", "{\n  \"title\": \"\",\n  \"price\": 9\n}", true},

		// Nothing to work on.
		{"cancelled_record", `{"ticket":"T-1"}`, "", false},
		{"cancelled_record", `[{"id":"A1","amount":1}]`, "", false},
		{"duplicate_record", `[]`, "", false},
		{"mixed_units", `[{"id":"A1","amount":1}]`, "", false},
		{"missing_field", `[{"id":"A1","status":"open"}]`, "", false},
		{"missing_field", `{"id":"","date":"2026-11-02"}`, "", false},
		{"missing_field", `"text"`, "", false},
		{"stale_date", `{"date":"yesterday"}`, "", false},
		{"stale_date", `{"date":"2026-13-45"}`, "", false},
		{"stale_date", `[{"date":"2026-11-02"}]`, "", false},
		{"duplicate_record", `not json`, "", false},
		{"no_such_variant", ordersReply, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.variant+" "+tt.reply, func(t *testing.T) {
			got, ok := Anomaly(tt.reply, tt.variant)
			if got != tt.want || ok != tt.ok {
				t.Errorf("Anomaly = %s, %v\n          want %s, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// Anomaly leaves the reply it was given alone.
func TestAnomalyDoesNotShareState(t *testing.T) {
	for _, v := range []string{"cancelled_record", "duplicate_record", "mixed_units", "missing_field", "stale_date"} {
		first, _ := Anomaly(ordersReply, v)
		second, _ := Anomaly(ordersReply, v)
		if first != second {
			t.Errorf("%s: two calls differ: %s vs %s", v, first, second)
		}
	}
}

func TestEmptied(t *testing.T) {
	tests := []struct{ in, want string }{
		{ordersReply, `{"orders":[],"date":""}`},
		{`{"s":"x","n":-1.5,"b":true,"f":false,"z":null,"l":[1,"a"],"o":{"deep":{"k":"v","n":2}},"e":{}}`,
			`{"s":"","n":0,"b":false,"f":false,"z":null,"l":[],"o":{"deep":{"k":"","n":0}},"e":{}}`},
		// Keys in the reply's order and its spacing.
		{"{\n  \"zeta\": \"A & B\",\n  \"alpha\": [1, 2]\n}", "{\n  \"zeta\": \"\",\n  \"alpha\": []\n}"},
		{`{"field":"priority","value":"urgent"}`, `{"field":"","value":""}`},
		{`[{"id":1}]`, `[]`},
		{`"text"`, `""`},
		{`42`, `0`},
		{`true`, `false`},
		{`null`, `null`},
		{`not json`, ``},
		{``, ``},
	}
	for _, tt := range tests {
		if got := Emptied(tt.in); got != tt.want {
			t.Errorf("Emptied(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// shape is the structure of a JSON value with its values left out.
func shape(v any) string {
	switch x := v.(type) {
	case map[string]any:
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(x)) {
			parts = append(parts, k+":"+shape(x[k]))
		}
		return "{" + strings.Join(parts, ",") + "}"
	case []any:
		return "[]"
	default:
		return fmt.Sprintf("%T", v)
	}
}

func TestEmptiedKeepsShape(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		in := randomJSON(r, 4)
		b, _ := json.Marshal(in)
		out := Emptied(string(b))
		var back any
		if err := json.Unmarshal([]byte(out), &back); err != nil {
			t.Fatalf("case %d: Emptied(%s) = %s, not JSON", i, b, out)
		}
		if shape(back) != shape(in) {
			t.Fatalf("case %d: Emptied(%s) = %s: shape %s, want %s", i, b, out, shape(back), shape(in))
		}
	}
}

// randomJSON builds a value of the kinds a tool reply holds, with text in several scripts.
func randomJSON(r *rand.Rand, depth int) any {
	words := []string{"", "a", "urgent", "Müller", "çağrı", "日本語", `quo"te`, "back\\slash", "line\nbreak", "💳 card", "<tag>&"}
	k := r.IntN(8)
	if depth == 0 {
		k = 3 + r.IntN(5)
	}
	switch k {
	case 0, 1:
		m := map[string]any{}
		for range r.IntN(5) {
			m[words[r.IntN(len(words))]+fmt.Sprint(r.IntN(3))] = randomJSON(r, depth-1)
		}
		return m
	case 2:
		var l []any
		for range r.IntN(4) {
			l = append(l, randomJSON(r, depth-1))
		}
		if l == nil {
			return []any{}
		}
		return l
	case 3, 4:
		return words[r.IntN(len(words))]
	case 5:
		return float64(r.IntN(20000)-10000) / 8
	case 6:
		return r.IntN(2) == 0
	default:
		return nil
	}
}

// A reply cut off by truncated_reply must not still parse, must not be empty, and must
// be a prefix of the reply on a rune boundary.
func TestTruncateProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	us := []float64{0, 0.25, 0.5, 0.75, math.Nextafter(1, 0)}
	var inputs []string
	for range 2000 {
		var v any
		// Top-level values as tools answer them: objects and lists, sometimes text.
		switch r.IntN(5) {
		case 0:
			v = randomJSON(r, 0)
			if _, num := v.(float64); num {
				// Every prefix of a bare number is a number: no cut of one fails to parse.
				continue
			}
		case 1:
			v = []any{randomJSON(r, 3)}
		default:
			m := map[string]any{"k": randomJSON(r, 3)}
			for range r.IntN(4) {
				m[fmt.Sprint(r.IntN(100))] = randomJSON(r, 3)
			}
			v = m
		}
		var b []byte
		switch r.IntN(3) {
		case 0:
			b, _ = json.Marshal(v)
		case 1:
			b, _ = json.MarshalIndent(v, "", "  ")
			b = append(b, '\n')
		default:
			b, _ = json.Marshal(v)
			b = append([]byte(" \t"), append(b, "\r\n  "...)...)
		}
		inputs = append(inputs, string(b))
	}
	for i, in := range inputs {
		if !json.Valid([]byte(in)) {
			t.Fatalf("input %d is not JSON: %s", i, in)
		}
		for _, u := range append(us, r.Float64()) {
			out := Truncate(in, u)
			switch {
			case out == "":
				t.Fatalf("Truncate(%q, %v) is empty", in, u)
			case json.Valid([]byte(out)):
				t.Fatalf("Truncate(%q, %v) = %q still parses", in, u, out)
			case !strings.HasPrefix(in, out) || len(out) >= len(in):
				t.Fatalf("Truncate(%q, %v) = %q is not a shorter prefix", in, u, out)
			case !utf8.ValidString(out):
				t.Fatalf("Truncate(%q, %v) = %q cuts a character", in, u, out)
			}
		}
	}
}

// Text that is not JSON is still cut, and never to nothing.
func TestTruncateText(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	alphabet := []rune("ab c,{[\"é日💳\n")
	for range 3000 {
		n := 2 + r.IntN(40)
		rs := make([]rune, n)
		for i := range rs {
			rs[i] = alphabet[r.IntN(len(alphabet))]
		}
		in := string(rs)
		u := r.Float64()
		out := Truncate(in, u)
		if out == "" || !strings.HasPrefix(in, out) || len(out) >= len(in) {
			t.Fatalf("Truncate(%q, %v) = %q: want a shorter, non-empty prefix", in, u, out)
		}
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		in   string
		u    float64
		want string
	}{
		// 59 bytes: 40% is 23, 60% is 35.
		{`{"field":"priority","value":"urgent","note":"set by agent"}`, 0, `{"field":"priority","va`},
		{`{"field":"priority","value":"urgent","note":"set by agent"}`, 0.999, `{"field":"priority","value":"urgent`},
		// A cut that would parse ({"a":1} before the trailing space) is moved back.
		{`{"a":1}   ` + "\n" + `     `, 0.4, `{"a":1`},
		{`[]`, 0.5, `[`},
		{`"é"`, 0.5, `"`},
		{``, 0.5, ``},
	}
	for _, tt := range tests {
		if got := Truncate(tt.in, tt.u); got != tt.want {
			t.Errorf("Truncate(%q, %v) = %q, want %q", tt.in, tt.u, got, tt.want)
		}
	}
}
