package faults

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/crashwall/chaos/spec"
)

// ordersReply is a source reply with records, units, numbers and a date.
const ordersReply = `{"orders":[{"id":"A1","status":"open","amount":12.5,"currency":"USD"},{"id":"A2","status":"open","amount":3,"currency":"USD"}],"date":"2026-11-02"}`

// decideSpec has a source, two tools that write and one that reads.
var decideSpec = &spec.Spec{
	Name: "decide",
	Tools: []spec.Tool{
		{Name: "read_orders", Effect: spec.EffectNone, Reply: ordersReply},
		{Name: "update_ticket", Effect: spec.EffectWrite, KeyField: "field", ValueField: "value", Reply: `{"status": "updated"}`},
		{Name: "get_ticket_field", Effect: spec.EffectRead, KeyField: "field", ValueField: "value"},
		{Name: "notify_customer", Effect: spec.EffectWrite, Key: "notified"},
	},
}

// armed is a condition built the way Generate and a hand-written spec condition build it.
func armed(tb testing.TB, family, variant, tool string, at int, every bool) Condition {
	tb.Helper()
	f, ok := Lookup(family)
	if !ok {
		tb.Fatalf("no family %q", family)
	}
	t, ok := decideSpec.ToolByName(tool)
	if !ok {
		tb.Fatalf("no tool %q", tool)
	}
	c := Condition{ID: ID(family, variant, tool, at), Family: family, Variant: variant, Tool: tool, At: max(at, 1), Every: every}
	f.Describe(decideSpec, t, &c)
	return c
}

// posCounter counts positions the way the hub does, with every write succeeding.
type posCounter struct {
	condTool   string
	calls      map[string]int
	sinceWrite map[string]int
	target     int
	wrote      bool
}

func newPosCounter(condTool string) *posCounter {
	return &posCounter{condTool: condTool, calls: map[string]int{}, sinceWrite: map[string]int{}}
}

func (tr *posCounter) next(tool string) Position {
	t, _ := decideSpec.ToolByName(tool)
	tr.calls[tool]++
	if tr.wrote {
		tr.sinceWrite[tool]++
	}
	if tool == tr.condTool {
		tr.target++
	}
	pos := Position{Tool: tool, Write: t.Effect == spec.EffectWrite, Call: tr.calls[tool], Target: tr.target, SinceWrite: tr.sinceWrite[tool]}
	if pos.Write {
		tr.wrote = true
	}
	return pos
}

// fires lists the 1-based places in seq at which c fires.
func firesAt(seed int64, c Condition, seq []string) []int {
	tr := newPosCounter(c.Tool)
	var out []int
	for i, tool := range seq {
		if Decide(seed, c, tr.next(tool)) {
			out = append(out, i+1)
		}
	}
	return out
}

const (
	toolSrc   = "read_orders"
	toolUpd   = "update_ticket"
	toolGet   = "get_ticket_field"
	toolOther = "notify_customer"
)

func TestDecide(t *testing.T) {
	// trip is a trial that reads, writes twice, reads back, and writes with another tool:
	//
	//	1 source  2 write  3 read  4 write  5 read  6 source  7 other write  8 write  9 read
	trip := []string{toolSrc, toolUpd, toolGet, toolUpd, toolGet, toolSrc, toolOther, toolUpd, toolGet}
	// readFirst reads back before anything was written.
	readFirst := []string{toolGet, toolGet, toolUpd, toolGet, toolGet}
	tests := []struct {
		name    string
		family  string
		variant string
		tool    string
		at      int
		every   bool
		seq     []string
		want    []int
	}{
		{name: "phantom success: first call only", family: "phantom_success", tool: toolUpd, seq: trip, want: []int{2}},
		{name: "phantom success #2", family: "phantom_success", tool: toolUpd, at: 2, seq: trip, want: []int{4}},
		{name: "phantom success every call from the 2nd", family: "phantom_success", tool: toolUpd, at: 2, every: true, seq: trip, want: []int{4, 8}},
		{name: "phantom failure: first call only", family: "phantom_failure", tool: toolUpd, seq: trip, want: []int{2}},
		{name: "phantom failure #3", family: "phantom_failure", tool: toolUpd, at: 3, seq: trip, want: []int{8}},
		{name: "transient error on a source", family: "transient_error", tool: toolSrc, seq: trip, want: []int{1}},
		{name: "transient error on a write", family: "transient_error", tool: toolUpd, seq: trip, want: []int{2}},
		{name: "transient error on a read", family: "transient_error", tool: toolGet, seq: trip, want: []int{3}},
		{name: "transient error #2 on a read", family: "transient_error", tool: toolGet, at: 2, seq: trip, want: []int{5}},
		{name: "transient error #4 never reached", family: "transient_error", tool: toolGet, at: 4, seq: trip, want: nil},
		{name: "permanent error on a source: every call", family: "permanent_error", tool: toolSrc, seq: trip, want: []int{1, 6}},
		{name: "permanent error on a write: every call", family: "permanent_error", tool: toolUpd, seq: trip, want: []int{2, 4, 8}},
		{name: "permanent error on a read: every call", family: "permanent_error", tool: toolGet, seq: trip, want: []int{3, 5, 9}},
		{name: "permanent error #2: every call from the 2nd", family: "permanent_error", tool: toolUpd, at: 2, seq: trip, want: []int{4, 8}},
		{name: "session drop: every tool from the 2nd call to the target", family: "session_drop", tool: toolUpd, seq: trip, want: []int{4, 5, 6, 7, 8, 9}},
		{name: "session drop #1 still starts at the 2nd", family: "session_drop", tool: toolUpd, at: 1, seq: trip, want: []int{4, 5, 6, 7, 8, 9}},
		{name: "session drop #3", family: "session_drop", tool: toolUpd, at: 3, seq: trip, want: []int{8, 9}},
		{name: "session drop: one call to the target never drops", family: "session_drop", tool: toolUpd, seq: []string{toolSrc, toolUpd, toolGet, toolGet, toolSrc}, want: nil},
		{name: "truncated reply on a source", family: "truncated_reply", tool: toolSrc, seq: trip, want: []int{1}},
		{name: "truncated reply #2 on a source", family: "truncated_reply", tool: toolSrc, at: 2, seq: trip, want: []int{6}},
		{name: "truncated reply on a read", family: "truncated_reply", tool: toolGet, seq: trip, want: []int{3}},
		{name: "premature read on a source", family: "premature_read", tool: toolSrc, seq: trip, want: []int{1}},
		{name: "premature read on a read", family: "premature_read", tool: toolGet, seq: trip, want: []int{3}},
		{name: "stale read: first read after a write", family: "stale_read", tool: toolGet, seq: trip, want: []int{3}},
		{name: "stale read #2 after a write", family: "stale_read", tool: toolGet, at: 2, seq: trip, want: []int{5}},
		{name: "stale read every read after a write", family: "stale_read", tool: toolGet, every: true, seq: trip, want: []int{3, 5, 9}},
		{name: "stale read: reads before any write are not hit", family: "stale_read", tool: toolGet, seq: readFirst, want: []int{4}},
		{name: "stale read #2 counts only reads after the write", family: "stale_read", tool: toolGet, at: 2, seq: readFirst, want: []int{5}},
		{name: "transient error on a read is counted from the start", family: "transient_error", tool: toolGet, seq: readFirst, want: []int{1}},
		{name: "data anomaly: every call", family: "data_anomaly", variant: "mixed_units", tool: toolSrc, seq: trip, want: []int{1, 6}},
		{name: "data anomaly #2: every call from the 2nd", family: "data_anomaly", variant: "stale_date", tool: toolSrc, at: 2, seq: trip, want: []int{6}},
		{name: "context switch: writes from the 2nd target call, any write tool", family: "context_switch", tool: toolUpd, seq: trip, want: []int{4, 7, 8}},
		{name: "context switch #3", family: "context_switch", tool: toolUpd, at: 3, seq: trip, want: []int{8}},
		{name: "empty success: first call only", family: "empty_success", tool: toolUpd, seq: trip, want: []int{2}},
		{name: "empty success #2", family: "empty_success", tool: toolUpd, at: 2, seq: trip, want: []int{4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := armed(t, tt.family, tt.variant, tt.tool, tt.at, tt.every)
			for _, seed := range []int64{0, 7, -3} {
				if got := firesAt(seed, c, tt.seq); !slices.Equal(got, tt.want) {
					t.Errorf("seed %d, %s on %v: fires at %v, want %v", seed, c.ID, tt.seq, got, tt.want)
				}
			}
		})
	}
	// Every family is in the table.
	seen := map[string]bool{}
	for _, tt := range tests {
		seen[tt.family] = true
	}
	for _, f := range Names() {
		if !seen[f] {
			t.Errorf("family %s has no Decide case", f)
		}
	}
}

func TestDecideNeverFires(t *testing.T) {
	tests := []struct {
		name string
		c    Condition
		pos  Position
	}{
		{"clean", Condition{ID: CleanID, SuccessPossible: true}, Position{Tool: toolUpd, Write: true, Call: 1, Target: 1}},
		{"unknown family", Condition{ID: "no_such@update_ticket", Family: "no_such", Tool: toolUpd, At: 1}, Position{Tool: toolUpd, Write: true, Call: 1, Target: 1}},
		{"a call to another tool", armed(t, "phantom_success", "", toolUpd, 1, false), Position{Tool: toolOther, Write: true, Call: 1}},
		{"a read under context switch", armed(t, "context_switch", "", toolUpd, 1, false), Position{Tool: toolGet, Call: 5, Target: 5, SinceWrite: 4}},
	}
	for _, tt := range tests {
		if Decide(1, tt.c, tt.pos) {
			t.Errorf("%s: %s fired at %+v", tt.name, tt.c.ID, tt.pos)
		}
	}
}

func TestDecideRate(t *testing.T) {
	const n = 10000
	c := armed(t, "permanent_error", "", toolSrc, 1, false)
	draw := func(seed int64, c Condition) []bool {
		out := make([]bool, n)
		for i := range out {
			out[i] = Decide(seed, c, Position{Tool: toolSrc, Call: i + 1, Target: i + 1})
		}
		return out
	}
	count := func(xs []bool) int {
		k := 0
		for _, x := range xs {
			if x {
				k++
			}
		}
		return k
	}

	// Rate 0 means 1, and 1 or more is always.
	for _, rate := range []float64{0, 1, 1.5} {
		c.Rate = rate
		if k := count(draw(7, c)); k != n {
			t.Errorf("rate %v: fired %d of %d, want all", rate, k, n)
		}
	}
	// Below zero is "not set" too (Rate <= 0 reads as 1).
	c.Rate = -0.5
	if k := count(draw(7, c)); k != n {
		t.Errorf("rate -0.5: fired %d of %d, want all", k, n)
	}

	for _, rate := range []float64{0.05, 0.3, 0.5, 0.9} {
		c.Rate = rate
		a, again, b := draw(7, c), draw(7, c), draw(8, c)
		if !slices.Equal(a, again) {
			t.Errorf("rate %v: the same seed decided differently", rate)
		}
		// Within 5 standard deviations of the rate.
		tol := 5 * math.Sqrt(rate*(1-rate)/n)
		for seed, d := range map[int64][]bool{7: a, 8: b} {
			if got := float64(count(d)) / n; math.Abs(got-rate) > tol {
				t.Errorf("rate %v, seed %d: fired on %.4f of calls, want %.4f +- %.4f", rate, seed, got, rate, tol)
			}
		}
		// Two seeds agree as two independent draws would: disagree on 2r(1-r) of the calls.
		differ := 0
		for i := range a {
			if a[i] != b[i] {
				differ++
			}
		}
		want := 2 * rate * (1 - rate)
		tol = 5 * math.Sqrt(want*(1-want)/n)
		if got := float64(differ) / n; math.Abs(got-want) > tol {
			t.Errorf("rate %v: seeds 7 and 8 disagree on %.4f of calls, want %.4f +- %.4f", rate, got, want, tol)
		}
		// The condition is part of the draw: another condition at the same rate decides differently.
		c2 := c
		c2.ID = "permanent_error@read_orders#1"
		if slices.Equal(a, draw(7, c2)) {
			t.Errorf("rate %v: two conditions drew the same decisions", rate)
		}
	}
}

// The rule of the package: whether the n-th call to a tool is hit does not depend on
// calls to other tools. Interleave reads, writes and calls to other tools and compare the
// decisions on the target's calls.
func TestDecideIgnoresOtherTools(t *testing.T) {
	alone := make([]string, 60)
	for i := range alone {
		alone[i] = toolSrc
	}
	var mixed []string
	others := [][]string{{toolUpd}, {toolGet, toolGet}, {}, {toolOther, toolUpd, toolGet}, {toolGet}}
	for i := range alone {
		mixed = append(mixed, others[i%len(others)]...)
		mixed = append(mixed, toolSrc)
	}
	for _, c := range []Condition{
		armed(t, "transient_error", "", toolSrc, 1, true),
		armed(t, "permanent_error", "", toolSrc, 1, false),
		armed(t, "truncated_reply", "", toolSrc, 2, true),
		armed(t, "premature_read", "", toolSrc, 1, true),
		armed(t, "data_anomaly", "duplicate_record", toolSrc, 1, false),
	} {
		for _, rate := range []float64{0, 0.5} {
			c.Rate = rate
			for _, seed := range []int64{1, 7, 99} {
				onTarget := func(seq []string) []bool {
					tr := newPosCounter(c.Tool)
					var out []bool
					for _, tool := range seq {
						pos := tr.next(tool)
						if tool == c.Tool {
							out = append(out, Decide(seed, c, pos))
						}
					}
					return out
				}
				a, b := onTarget(alone), onTarget(mixed)
				if !slices.Equal(a, b) {
					t.Errorf("%s rate %v seed %d: the target's calls are decided differently when other calls are made\n alone %v\n mixed %v", c.ID, rate, seed, a, b)
				}
			}
		}
	}
}

// The same n-th call, with different counts of the write-related fields, draws the same.
func TestDecideRateUsesTheCallsOwnPosition(t *testing.T) {
	c := armed(t, "transient_error", "", toolSrc, 1, true)
	c.Rate = 0.5
	for seed := range int64(20) {
		for call := 1; call <= 20; call++ {
			base := Decide(seed, c, Position{Tool: toolSrc, Call: call, Target: call})
			for _, sw := range []int{1, 3, call} {
				if got := Decide(seed, c, Position{Tool: toolSrc, Call: call, Target: call, SinceWrite: sw}); got != base {
					t.Fatalf("seed %d call %d: SinceWrite %d changed the decision from %v to %v", seed, call, sw, base, got)
				}
			}
		}
	}
}

func TestAnomalyVariantsKnown(t *testing.T) {
	for _, v := range anomalyVariants {
		if _, ok := anomalies[v]; !ok {
			t.Errorf("anomalyVariants has %q, Anomaly does not know it", v)
		}
	}
	for v := range anomalies {
		if !slices.Contains(anomalyVariants, v) {
			t.Errorf("anomaly %q is not in anomalyVariants", v)
		}
	}
}

func TestIDs(t *testing.T) {
	tests := []struct {
		id                    string
		family, variant, tool string
		at                    int
		canonical             string
	}{
		{"clean", "", "", "", 0, "clean"},
		{"phantom_success@update_ticket", "phantom_success", "", "update_ticket", 0, "phantom_success@update_ticket"},
		{"phantom_success@update_ticket#2", "phantom_success", "", "update_ticket", 2, "phantom_success@update_ticket#2"},
		{"phantom_success@update_ticket#1", "phantom_success", "", "update_ticket", 1, "phantom_success@update_ticket"},
		{"data_anomaly.mixed_units@read_orders", "data_anomaly", "mixed_units", "read_orders", 0, "data_anomaly.mixed_units@read_orders"},
		{"data_anomaly.mixed_units@read_orders#2", "data_anomaly", "mixed_units", "read_orders", 2, "data_anomaly.mixed_units@read_orders#2"},
		{"session_drop@crm.v2-update#12", "session_drop", "", "crm.v2-update", 12, "session_drop@crm.v2-update#12"},
		// Ajantik's spellings.
		{"phantom-success:update_ticket", "phantom_success", "", "update_ticket", 0, "phantom_success@update_ticket"},
		{"transient-error:update-ticket", "transient_error", "", "update-ticket", 0, "transient_error@update-ticket"},
		{"anomaly-mixed_units:read_orders", "data_anomaly", "mixed_units", "read_orders", 0, "data_anomaly.mixed_units@read_orders"},
		{"anomaly-stale_date:read_orders#2", "data_anomaly", "stale_date", "read_orders", 2, "data_anomaly.stale_date@read_orders#2"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			family, variant, tool, at, err := ParseID(tt.id)
			if err != nil {
				t.Fatal(err)
			}
			if family != tt.family || variant != tt.variant || tool != tt.tool || at != tt.at {
				t.Errorf("ParseID = %q %q %q %d, want %q %q %q %d", family, variant, tool, at, tt.family, tt.variant, tt.tool, tt.at)
			}
			if tt.id == CleanID {
				return
			}
			id := ID(family, variant, tool, at)
			if id != tt.canonical {
				t.Errorf("ID = %q, want %q", id, tt.canonical)
			}
			// The canonical id parses to the same parts.
			f2, v2, t2, a2, err := ParseID(id)
			if err != nil || f2 != family || v2 != variant || t2 != tool || max(a2, 1) != max(at, 1) {
				t.Errorf("ParseID(%q) = %q %q %q %d %v: not a round trip", id, f2, v2, t2, a2, err)
			}
		})
	}
	for _, tt := range []struct{ id, err string }{
		{"phantom_sucess@update_ticket", `condition "phantom_sucess@update_ticket": unknown fault family "phantom_sucess"`},
		{"phantom_success@update_ticket#0", `condition "phantom_success@update_ticket#0": the call after # must be a number from 1`},
		{"phantom_success@update_ticket#x", `condition "phantom_success@update_ticket#x": the call after # must be a number from 1`},
		{"ticket-503", `condition "ticket-503": unknown fault family "ticket_503"`},
	} {
		if _, _, _, _, err := ParseID(tt.id); err == nil || err.Error() != tt.err {
			t.Errorf("ParseID(%q) error = %v, want %s", tt.id, err, tt.err)
		}
	}
}

func TestFind(t *testing.T) {
	conds, err := Generate(decideSpec)
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{
		"phantom_success@update_ticket":   "phantom_success@update_ticket",
		"phantom-success:update_ticket":   "phantom_success@update_ticket",
		"anomaly-mixed_units:read_orders": "data_anomaly.mixed_units@read_orders",
		"clean":                           "clean",
		// A targeted call of a generated condition.
		"phantom_success@update_ticket#2": "phantom_success@update_ticket#2",
	} {
		c, ok := Find(conds, id)
		if !ok || c.ID != want {
			t.Errorf("Find(%q) = %q, %v; want %q", id, c.ID, ok, want)
		}
	}
	for _, id := range []string{"phantom_success@get_ticket_field", "phantom_success@get_ticket_field#2", "nonsense"} {
		if c, ok := Find(conds, id); ok {
			t.Errorf("Find(%q) = %q, want none", id, c.ID)
		}
	}
}

// generateFile is the conditions Generate makes of the spec file at path.
func generateFile(t *testing.T, path string) []Condition {
	t.Helper()
	s, err := spec.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	conds, err := Generate(s)
	if err != nil {
		t.Fatal(err)
	}
	return conds
}

func TestGenerateExample(t *testing.T) {
	conds := generateFile(t, "../examples/support-ticket.yaml")
	type golden struct {
		ID              string
		SuccessPossible bool
		Every           bool
	}
	want := []golden{
		{"clean", true, false},
		{"phantom_success@update_ticket", true, false},
		{"phantom_failure@update_ticket", true, false},
		{"transient_error@read_email", true, false},
		{"transient_error@update_ticket", true, false},
		{"transient_error@get_ticket_field", true, false},
		{"permanent_error@read_email", false, true},
		{"permanent_error@update_ticket", false, true},
		{"permanent_error@get_ticket_field", true, true},
		{"session_drop@update_ticket", false, false},
		{"truncated_reply@read_email", true, false},
		{"truncated_reply@get_ticket_field", true, false},
		{"premature_read@read_email", true, false},
		{"premature_read@get_ticket_field", true, false},
		{"stale_read@get_ticket_field", true, false},
		{"data_anomaly.missing_field@read_email", true, true}, // blanks "ticket", which no check needs
		{"data_anomaly.stale_date@read_email", true, true},    // the task never asks about the date
		{"context_switch@update_ticket", false, false},
		{"empty_success@update_ticket", true, false},
	}
	var got []golden
	for _, c := range conds {
		got = append(got, golden{c.ID, c.SuccessPossible, c.Every})
		// Every generated condition's id is its parts, and hits the first call.
		if c.Clean() {
			continue
		}
		if id := ID(c.Family, c.Variant, c.Tool, c.At); id != c.ID || c.At != 1 || c.What == "" {
			t.Errorf("%s: ID of its parts %q, At %d, What %q", c.ID, id, c.At, c.What)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Generate(examples/support-ticket.yaml):\n got %s\nwant %s", fmt.Sprint(got), fmt.Sprint(want))
	}
}

func TestGenerateHandWritten(t *testing.T) {
	yes := true
	s := *decideSpec
	s.Faults = []string{"phantom_success", "data_anomaly"}
	s.Conditions = []spec.ConditionSpec{
		{ID: "ticket-503", Family: "transient_error", Tool: toolUpd, At: 2, Message: "503 down"},
		{ID: "phantom_success@update_ticket", Family: "phantom_success", Tool: toolUpd, Every: true, Description: "every write vanishes"},
		{ID: "email-replaced", Family: "data_anomaly", Tool: toolSrc, Reply: `{"orders":[]}`, SuccessPossible: &yes},
	}
	conds, err := Generate(&s)
	if err != nil {
		t.Fatal(err)
	}
	want := []Condition{
		{ID: "clean", SuccessPossible: true, What: "no fault: the tools behave"},
		{ID: "phantom_success@update_ticket", Family: "phantom_success", Tool: toolUpd, At: 1, Every: true, SuccessPossible: true, What: "every write vanishes"},
		{ID: "phantom_success@notify_customer", Family: "phantom_success", Tool: toolOther, At: 1, SuccessPossible: true, What: "the first call to notify_customer: answered success, nothing stored"},
		{ID: "data_anomaly.cancelled_record@read_orders", Family: "data_anomaly", Variant: "cancelled_record", Tool: toolSrc, At: 1, Every: true, SuccessPossible: true, What: "every call to read_orders: a cancelled copy of a record is added to the list; the result must not change"},
		{ID: "data_anomaly.duplicate_record@read_orders", Family: "data_anomaly", Variant: "duplicate_record", Tool: toolSrc, At: 1, Every: true, SuccessPossible: true, What: "every call to read_orders: one record arrives twice; it must be counted once"},
		{ID: "data_anomaly.mixed_units@read_orders", Family: "data_anomaly", Variant: "mixed_units", Tool: toolSrc, At: 1, Every: true, SuccessPossible: false, What: "every call to read_orders: one record's unit is changed; it must not be added in without a word"},
		{ID: "data_anomaly.missing_field@read_orders", Family: "data_anomaly", Variant: "missing_field", Tool: toolSrc, At: 1, Every: true, SuccessPossible: true, What: "every call to read_orders: a field is missing or empty; it must not be guessed (field \"amount\", was 12.5)"},
		{ID: "data_anomaly.stale_date@read_orders", Family: "data_anomaly", Variant: "stale_date", Tool: toolSrc, At: 1, Every: true, SuccessPossible: true, What: "every call to read_orders: the data is three days old; it must not be presented as current"},
		{ID: "ticket-503", Family: "transient_error", Tool: toolUpd, At: 2, Message: "503 down", SuccessPossible: true, What: "the 2nd call to update_ticket: 503 once, then the tool works"},
		{ID: "email-replaced", Family: "data_anomaly", Tool: toolSrc, At: 1, Every: true, Reply: `{"orders":[]}`, SuccessPossible: true, What: "every call to read_orders: answered with the reply the spec gives"},
	}
	if !reflect.DeepEqual(conds, want) {
		t.Errorf("Generate:\n got %+v\nwant %+v", conds, want)
	}

	s.Conditions = []spec.ConditionSpec{
		{ID: "bad-tool", Family: "transient_error", Tool: "nope"},
		{ID: "bad-effect", Family: "phantom_success", Tool: toolGet},
	}
	s.Path = "spec.yaml"
	_, err = Generate(&s)
	wantErr := `spec.yaml: condition "bad-tool": unknown tool "nope"` + "\n" +
		`spec.yaml: condition "bad-effect": phantom_success applies to tools that write; "get_ticket_field" has effect: read`
	if err == nil || err.Error() != wantErr {
		t.Errorf("Generate error:\n got %v\nwant %s", err, wantErr)
	}
}

// An Ajantik scenario file: auto_faults generate, its hand-written faults follow.
func TestGenerateAjantik(t *testing.T) {
	conds := generateFile(t, "../spec/testdata/ajantik-support-ticket.yaml")
	type golden struct {
		ID, Family, Tool string
		At               int
		Every            bool
		SuccessPossible  bool
	}
	want := []golden{
		{"clean", "", "", 0, false, true},
		{"transient_error@read_email", "transient_error", "read_email", 1, false, true},
		{"transient_error@update_ticket", "transient_error", "update_ticket", 1, false, true},
		{"transient_error@get_ticket_field", "transient_error", "get_ticket_field", 1, false, true},
		{"transient_error@list_teams", "transient_error", "list_teams", 1, false, true},
		{"phantom_success@update_ticket", "phantom_success", "update_ticket", 1, false, true},
		{"session_drop@update_ticket", "session_drop", "update_ticket", 1, false, false},
		// after: 1 is kept as written, not made into at (docs/spec.md), so the first write is hit.
		{"ticket-503", "transient_error", "update_ticket", 1, false, false},
		{"ticket-phantom", "phantom_success", "update_ticket", 1, true, true},
		{"email-replaced", "data_anomaly", "read_email", 1, true, true},
	}
	var got []golden
	for _, c := range conds {
		got = append(got, golden{c.ID, c.Family, c.Tool, c.At, c.Every, c.SuccessPossible})
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Generate(ajantik-support-ticket.yaml):\n got %+v\nwant %+v", got, want)
	}
	byID := map[string]Condition{}
	for _, c := range conds {
		byID[c.ID] = c
	}
	if c := byID["ticket-503"]; c.Message != "503 Service Unavailable" || c.What != "The ticket system fails the second write once." {
		t.Errorf("ticket-503: message %q, what %q", c.Message, c.What)
	}
	if c := byID["email-replaced"]; c.Reply != `{"ticket":"T-4821","body":"Never mind, all is fine."}` {
		t.Errorf("email-replaced: reply %s", c.Reply)
	}
}

// missing_field blanks the field Ajantik blanks (the first in the file's order) and takes
// success away only when a state check needs the blanked value.
func TestMissingFieldSuccessPossible(t *testing.T) {
	tests := []struct {
		name, reply string
		check       spec.StateCheck
		possible    bool
	}{
		{"a currency the task does not need", `{"currency":"USD","amount":"42.50"}`, spec.StateCheck{Key: "paid", Equals: "42.50"}, true},
		{"the amount the task stores", `{"amount":"42.50","currency":"USD"}`, spec.StateCheck{Key: "paid", Equals: "42.50"}, false},
		{"a body that says what to store", `{"body":"this is URGENT","from":"a@b"}`, spec.StateCheck{Key: "priority", Equals: "urgent"}, false},
		{"a contains check", `{"name":"Acme Ltd","city":"Oslo"}`, spec.StateCheck{Key: "customer", Contains: "Acme"}, false},
		{"a record's number the task needs", `[{"id":"A1","qty":3,"amount":12.5}]`, spec.StateCheck{Key: "qty", Equals: 3}, false},
		{"a record's number it does not", `[{"id":"A1","qty":3,"amount":12.5}]`, spec.StateCheck{Key: "total", Equals: 12.5}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &spec.Spec{Name: "m", Tools: []spec.Tool{{Name: "src", Effect: spec.EffectNone, Reply: tt.reply}},
				Tasks: []spec.Task{{ID: "t", StateChecks: []spec.StateCheck{tt.check}}}}
			c := Condition{ID: "data_anomaly.missing_field@src", Family: "data_anomaly", Variant: "missing_field", Tool: "src", At: 1}
			dataAnomaly{}.describe(s, s.Tools[0], &c)
			if c.SuccessPossible != tt.possible {
				t.Errorf("success possible = %v, want %v (%s)", c.SuccessPossible, tt.possible, c.What)
			}
		})
	}
}

// stale_date takes success away only when the task needs the date to be current: a state
// check expects the date, or the task names it or asks when (the rule missing_field follows).
func TestStaleDateSuccessPossible(t *testing.T) {
	const reply = `{"ticket":"T-1","date":"2026-11-02","body":"please route to payments"}`
	tests := []struct {
		name, prompt string
		check        spec.StateCheck
		possible     bool
	}{
		{"a task that never shows the date", "Set the ticket's team the way the email asks.", spec.StateCheck{Key: "team", Equals: "payments"}, true},
		{"a task that asks when", "Tell me when the customer wrote, and set the team.", spec.StateCheck{Key: "team", Equals: "payments"}, false},
		{"a task that names the date", "Record the email's date on the ticket.", spec.StateCheck{Key: "team", Equals: "payments"}, false},
		{"a check that expects the date", "Copy the email onto the ticket.", spec.StateCheck{Key: "received", Equals: "2026-11-02"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &spec.Spec{Name: "m", Tools: []spec.Tool{{Name: "src", Effect: spec.EffectNone, Reply: reply}},
				Tasks: []spec.Task{{ID: "t", Prompt: tt.prompt, StateChecks: []spec.StateCheck{tt.check}}}}
			c := Condition{ID: "data_anomaly.stale_date@src", Family: "data_anomaly", Variant: "stale_date", Tool: "src", At: 1}
			dataAnomaly{}.describe(s, s.Tools[0], &c)
			if c.SuccessPossible != tt.possible {
				t.Errorf("success possible = %v, want %v (%s)", c.SuccessPossible, tt.possible, c.What)
			}
		})
	}
}

// TestAjantikFaultSet: on Ajantik's own scenario file, auto_faults: [all] gives chaos's
// larger set; with auto_faults_set: ajantik it gives the 14 conditions Ajantik generates
// (clean and 13 faults), computed here by Ajantik's rules: transient and permanent error
// on every tool, truncated reply and premature read on every tool that does not write,
// phantom success and session drop on every write, and the anomalies Ajantik derives
// from each source's reply (read_email has a date: stale_date, and no missing_field).
// The file's own auto_faults line is replaced by [all], and read_email given a date.
func TestAjantikFaultSet(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "spec", "testdata", "ajantik-support-ticket.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(b), "auto_faults: [transient-error, phantom_success, session_drop]", "auto_faults: [all]", 1)
	text = strings.Replace(text, `"subject": "Checkout`, `"date": "2026-11-02", "subject": "Checkout`, 1)
	hand := map[string]bool{"clean": true, "ticket-503": true, "ticket-phantom": true, "email-replaced": true}
	generated := func(set string) []string {
		s, err := spec.Parse("a.yaml", []byte(text+set))
		if err != nil {
			t.Fatal(err)
		}
		conds, err := Generate(s)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, c := range conds {
			if !hand[c.ID] {
				ids = append(ids, c.ID)
			}
		}
		return ids
	}
	ajantik := []string{
		"transient_error@read_email", "transient_error@update_ticket", "transient_error@get_ticket_field", "transient_error@list_teams",
		"permanent_error@read_email", "permanent_error@update_ticket", "permanent_error@get_ticket_field", "permanent_error@list_teams",
		"truncated_reply@read_email", "truncated_reply@get_ticket_field", "truncated_reply@list_teams",
		"phantom_success@update_ticket",
		"premature_read@read_email", "premature_read@get_ticket_field", "premature_read@list_teams",
		"session_drop@update_ticket",
		"data_anomaly.stale_date@read_email",
		// list_teams has no response: Ajantik's default {"status": "ok"} has a text and no
		// date, so Ajantik blanks "status".
		"data_anomaly.missing_field@list_teams",
	}
	got := generated("auto_faults_set: ajantik\n")
	sort.Strings(got)
	sort.Strings(ajantik)
	if !reflect.DeepEqual(got, ajantik) {
		t.Errorf("auto_faults_set: ajantik:\n got %v\nwant %v", got, ajantik)
	}
	all := generated("")
	if len(all) <= len(ajantik) {
		t.Errorf("chaos's own set (%d) should be larger than Ajantik's (%d): %v", len(all), len(ajantik), all)
	}
	for _, id := range []string{"phantom_failure@update_ticket", "stale_read@get_ticket_field", "context_switch@update_ticket", "empty_success@update_ticket", "data_anomaly.missing_field@read_email"} {
		if !slices.Contains(all, id) || slices.Contains(got, id) {
			t.Errorf("%s: in chaos's set %v, in Ajantik's %v; want only in chaos's", id, slices.Contains(all, id), slices.Contains(got, id))
		}
	}
}
