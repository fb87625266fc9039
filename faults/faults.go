// Package faults is the fault catalogue: the tool-layer families that the wall injects,
// generated from a spec's tools, and the pure functions that decide when a fault fires
// and what the agent receives instead.
//
//	call ──> Decide(seed, condition, position) ──fires──> Family.Apply ──> reply the agent gets
//	                                            └─no────> the world answers as it would
package faults

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"

	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// CleanID is the condition with no fault armed.
const CleanID = "clean"

// Condition is one arm of an experiment: clean, or one family on one tool.
type Condition struct {
	ID      string `json:"id"`
	Family  string `json:"family,omitempty"`
	Variant string `json:"variant,omitempty"`
	Tool    string `json:"tool,omitempty"`
	// At is the call that is hit: the At-th call to Tool (family-specific meaning, see Info.Hits).
	At int `json:"at,omitempty"`
	// Every: every call from At on is hit.
	Every bool `json:"every,omitempty"`
	// Rate is the chance that an eligible call is hit (1 when zero).
	Rate float64 `json:"rate,omitempty"`
	// Reply replaces the tool's reply (a hand-written data anomaly).
	Reply string `json:"reply,omitempty"`
	// Message is the text of an error the fault answers with ("" for the family's own).
	Message string `json:"message,omitempty"`
	// SuccessPossible says whether the task can still end right under this condition.
	SuccessPossible bool `json:"success_possible"`
	// What is one line on what the condition does.
	What string `json:"what"`
}

// Clean reports whether no fault is armed.
func (c Condition) Clean() bool { return c.Family == "" }

// Position is where a call stands in a trial, as far as a fault may know: counts of
// calls to the condition's tool, never of unrelated calls, so two runs that differ in
// other calls are faulted at the same places.
type Position struct {
	// Tool is the tool being called.
	Tool string
	// Write says the called tool writes.
	Write bool
	// Call is the n-th call to Tool (1-based).
	Call int
	// Target is how many calls the condition's tool has had, this one included.
	Target int
	// SinceWrite is the n-th call to Tool made after the first write of the trial (0: none yet).
	SinceWrite int
}

// Request is a call as a fault sees it.
type Request struct {
	Tool spec.Tool
	Args map[string]any
	Pos  Position
}

// World is what a fault may ask of the world behind the wall.
type World interface {
	// Call runs the tool in a mode and returns its real reply.
	Call(ctx context.Context, t spec.Tool, args map[string]any, mode world.Mode) world.Reply
	// ReadBefore answers a read with the key's value before the last write to that key.
	ReadBefore(t spec.Tool, args map[string]any) world.Reply
}

// Fabricator is an optional capability of a World: the success reply a call would get,
// made up without performing it. Real servers behind the wall have one (a success of the
// tool seen earlier); without it a fabricated success is the tool's fixed reply.
type Fabricator interface {
	Fabricate(t spec.Tool, args map[string]any) world.Reply
}

// fabricated is the success reply of a call that is not performed.
func fabricated(w World, req Request) world.Reply {
	if f, ok := w.(Fabricator); ok {
		return f.Fabricate(req.Tool, req.Args)
	}
	return world.OK(world.SuccessText(req.Tool))
}

// Outcome is what happened to a call on which a fault fired.
type Outcome struct {
	// Reply is what the agent receives.
	Reply world.Reply
	// Real is what the world really answered ("" text when the call was not forwarded).
	Real world.Reply
	// Performed says whether the call's effect reached the world.
	Performed bool
	// How says, in words, what the fault did.
	How string
	// Err is set when the fault could not apply; the call then fails and the trial has
	// no verdict. A fault that cannot apply is never a quiet no-op.
	Err error
}

// Info describes a condition for people: `chaos faults` prints it.
type Info struct {
	// Hits says which call is hit.
	Hits string `json:"hits"`
	// Receives says what the agent receives.
	Receives string `json:"receives"`
	// World says whether and how the world changes.
	World string `json:"world"`
}

// Decide reports whether the condition's fault fires on the call at pos. It is a pure
// function of its arguments: the same seed, condition and position always decide the same.
func Decide(seed int64, c Condition, pos Position) bool {
	if c.Clean() {
		return false
	}
	f, ok := Lookup(c.Family)
	if !ok || !f.Family.Hits(c, pos) {
		return false
	}
	if c.Rate <= 0 || c.Rate >= 1 {
		return true
	}
	return unit(seed, c.ID, pos) < c.Rate
}

// unit is a number in [0, 1) drawn from the seed, the condition and the call's own
// place (its tool and the n-th call to it). Target and SinceWrite are left out: they move
// with calls to other tools (SinceWrite with the first write), and the draw must not.
func unit(seed int64, cond string, pos Position) float64 {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(seed))
	h.Write(b[:])
	fmt.Fprintf(h, "|%s|%s|%d", cond, pos.Tool, pos.Call)
	// FNV leaves its high bits barely touched by the last bytes (the call number), so
	// mix them (splitmix64's finalizer) before taking the top 53.
	x := h.Sum64()
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11) / float64(1<<53)
}

// ID builds a condition id: family[.variant]@tool[#at].
func ID(family, variant, tool string, at int) string {
	id := family
	if variant != "" {
		id += "." + variant
	}
	if tool != "" {
		id += "@" + tool
	}
	if at > 1 {
		id += "#" + strconv.Itoa(at)
	}
	return id
}

// ParseID splits a condition id such as "data_anomaly.mixed_units@read_orders#2".
// It also takes Ajantik's spelling ("phantom-success:update_ticket").
func ParseID(id string) (family, variant, tool string, at int, err error) {
	if id == CleanID {
		return "", "", "", 0, nil
	}
	rest := id
	if i := strings.LastIndex(rest, "#"); i >= 0 {
		at, err = strconv.Atoi(rest[i+1:])
		if err != nil || at < 1 {
			return "", "", "", 0, fmt.Errorf("condition %q: the call after # must be a number from 1", id)
		}
		rest = rest[:i]
	}
	sep := "@"
	if !strings.Contains(rest, "@") && strings.Contains(rest, ":") {
		sep = ":"
	}
	head, tool, _ := strings.Cut(rest, sep)
	head = strings.ReplaceAll(head, "-", "_")
	if strings.HasPrefix(head, "anomaly_") { // Ajantik: anomaly-mixed_units
		family, variant = "data_anomaly", strings.TrimPrefix(head, "anomaly_")
	} else {
		family, variant, _ = strings.Cut(head, ".")
	}
	if _, ok := Lookup(family); !ok {
		return "", "", "", 0, fmt.Errorf("condition %q: unknown fault family %q", id, family)
	}
	return family, variant, tool, at, nil
}

// Generate returns the conditions of a spec: clean first, then one per (family,
// variant, eligible tool) for the families the spec asks for, then the hand-written ones.
func Generate(s *spec.Spec) ([]Condition, error) {
	out := []Condition{{ID: CleanID, SuccessPossible: true, What: "no fault: the tools behave"}}
	seen := map[string]bool{CleanID: true}
	for _, f := range wanted(s) {
		for _, t := range s.Tools {
			if t.Server != "" && simulatedOnly(f.Name) {
				continue
			}
			for _, v := range f.Variants(s, t) {
				c := Condition{ID: ID(f.Name, v, t.Name, 0), Family: f.Name, Variant: v, Tool: t.Name, At: 1}
				f.Describe(s, t, &c)
				if !seen[c.ID] {
					seen[c.ID] = true
					out = append(out, c)
				}
			}
		}
	}
	for _, c := range browserConditions(s) {
		seen[c.ID] = true
		out = append(out, c)
	}
	if s.FaultSet == "ajantik" {
		out = ajantikSet(s, out)
		seen = map[string]bool{}
		for _, c := range out {
			seen[c.ID] = true
		}
	}
	var errs []string
	for _, cs := range s.Conditions {
		c, err := fromSpec(s, cs)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		if seen[c.ID] {
			// A hand-written condition with a generated id replaces the generated one.
			for i := range out {
				if out[i].ID == c.ID {
					out[i] = c
				}
			}
			continue
		}
		seen[c.ID] = true
		out = append(out, c)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return out, nil
}

func wanted(s *spec.Spec) []Entry {
	if len(s.Faults) == 0 {
		return Families()
	}
	var out []Entry
	for _, n := range s.Faults {
		if n == "all" {
			return Families()
		}
		if f, ok := Lookup(n); ok {
			out = append(out, f)
		}
	}
	return out
}

func fromSpec(s *spec.Spec, cs spec.ConditionSpec) (Condition, error) {
	where := s.Path
	if where == "" {
		where = s.Name
	}
	if cs.Line > 0 {
		where = fmt.Sprintf("%s:%d", where, cs.Line)
	}
	if cs.Family == "" {
		return Condition{ID: cs.ID, SuccessPossible: true, What: "no fault: the tools behave"}, nil
	}
	f, ok := Lookup(cs.Family)
	if !ok {
		return Condition{}, fmt.Errorf("%s: condition %q: unknown fault family %q", where, cs.ID, cs.Family)
	}
	if cs.Tool == spec.BrowserTool && s.Browser != nil {
		return browserFromSpec(cs, where) // browser.go
	}
	t, ok := s.ToolByName(cs.Tool)
	if !ok {
		return Condition{}, fmt.Errorf("%s: condition %q: unknown tool %q", where, cs.ID, cs.Tool)
	}
	if t.Server != "" && simulatedOnly(f.Name) {
		return Condition{}, fmt.Errorf("%s: condition %q: %s needs the simulated world; %q is a tool of the real server %q", where, cs.ID, f.Name, t.Name, t.Server)
	}
	vs := f.Variants(s, t)
	if cs.Reply == "" && !contains(vs, cs.Variant) {
		if vs == nil {
			return Condition{}, fmt.Errorf("%s: condition %q: %s applies to %s; %q has effect: %s", where, cs.ID, f.Name, f.Eligible, t.Name, t.Effect)
		}
		return Condition{}, fmt.Errorf("%s: condition %q: %s has no variant %q for %q (it has: %s)", where, cs.ID, f.Name, cs.Variant, t.Name, strings.Join(vs, ", "))
	}
	c := Condition{ID: cs.ID, Family: f.Name, Variant: cs.Variant, Tool: t.Name, At: cs.At, Every: cs.Every, Reply: cs.Reply, Message: cs.Message}
	if c.At == 0 {
		c.At = 1
	}
	if cs.After > 0 && lasting(f.Name) {
		// Ajantik's after: N successful calls, then the fault starts and lasts.
		c.At = cs.After + 1
	}
	if c.ID == "" {
		c.ID = ID(c.Family, c.Variant, c.Tool, c.At)
	}
	f.Describe(s, t, &c)
	if cs.SuccessPossible != nil {
		c.SuccessPossible = *cs.SuccessPossible
	}
	if cs.Description != "" {
		c.What = cs.Description
	}
	return c, nil
}

// Describe returns what a condition does, for `chaos faults`.
func Describe(s *spec.Spec, c Condition) Info {
	if c.Clean() {
		return Info{Hits: "no call", Receives: "the real reply", World: "changes as asked"}
	}
	if c.Tool == spec.BrowserTool {
		cc := c
		return describeBrowser(&cc)
	}
	f, _ := Lookup(c.Family)
	t, _ := s.ToolByName(c.Tool)
	cc := c
	return f.Describe(s, t, &cc)
}

// Find returns the condition with id (or its Ajantik spelling) from conds.
func Find(conds []Condition, id string) (Condition, bool) {
	for _, c := range conds {
		if c.ID == id {
			return c, true
		}
	}
	fam, v, tool, at, err := ParseID(id)
	if err != nil {
		return Condition{}, false
	}
	want := ID(fam, v, tool, at)
	for _, c := range conds {
		if c.ID == want {
			return c, true
		}
	}
	// A targeted call (#N) of a generated condition: the same fault on the N-th call.
	base := ID(fam, v, tool, 0)
	for _, c := range conds {
		if c.ID == base && at > 1 && c.Family != "" {
			t := Condition{ID: want, Family: c.Family, Variant: c.Variant, Tool: c.Tool, At: at, Every: c.Every, Rate: c.Rate, Reply: c.Reply, Message: c.Message}
			f, _ := Lookup(c.Family)
			f.Describe(nil, spec.Tool{Name: c.Tool}, &t)
			t.SuccessPossible, t.Every = c.SuccessPossible, c.Every
			return t, true
		}
	}
	return Condition{}, false
}

// IDs returns the ids of conds, sorted, for messages.
func IDs(conds []Condition) []string {
	var out []string
	for _, c := range conds {
		out = append(out, c.ID)
	}
	sort.Strings(out)
	return out
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// Nth says "the first", "the 2nd" call.
func Nth(n int) string {
	switch n {
	case 0, 1:
		return "the first"
	case 2:
		return "the 2nd"
	case 3:
		return "the 3rd"
	default:
		return fmt.Sprintf("the %dth", n)
	}
}

// hitsAt is the common rule: the At-th call to the condition's tool, or every call from it.
func hitsAt(c Condition, pos Position) bool {
	if pos.Tool != c.Tool {
		return false
	}
	at := max(c.At, 1)
	if c.Every {
		return pos.Call >= at
	}
	return pos.Call == at
}

func hitsText(c Condition) string {
	if c.Every {
		if c.At <= 1 {
			return "every call to " + c.Tool
		}
		return fmt.Sprintf("every call to %s from %s on", c.Tool, Nth(c.At))
	}
	return fmt.Sprintf("%s call to %s", Nth(c.At), c.Tool)
}
