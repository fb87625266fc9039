package faults

// The model layer: faults in the responses an agent's model client receives. The
// names, targets and texts come from AgentChaos (MIT licence, see NOTICE); every
// mutation here is our own.
//
//	model call ──> DecideModel(seed, rate, steps, position, attempt) ──fires──> ApplyModelFault ──> what the agent receives
//	                                                                 └─no────> the model's own response

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/crashwall/chaos/spec"
)

// Normalized finish reasons: each API's own vocabulary maps onto these.
const (
	FinishStop          = "stop"
	FinishLength        = "length"
	FinishToolCalls     = "tool_calls"
	FinishContentFilter = "content_filter"
)

// The texts the agent receives from a model fault, AgentChaos's byte for byte
// (TestModelFaultTextsAreAgentChaos). One copy, used by every API.
const (
	TextModelError         = "[API ERROR] HTTP 500: Internal Server Error. The server encountered an unexpected condition."
	TextModelTimeout       = "[TIMEOUT] The request timed out. The server did not respond within the expected time."
	TextModelSchema        = `{"error": "content_policy_violation", "message": "This response has been filtered."}`
	TextToolTimeout        = "[TIMEOUT] Connection dropped. The server did not respond."
	ArgsWrongSchema        = `{"wrong_param": "unexpected_value"}`
	TextServiceUnavailable = "[SERVICE UNAVAILABLE] HTTP 503: The server is temporarily unable to handle the request."
	TextContentFiltered    = "[CONTENT FILTERED] This response has been blocked by the content safety filter."
	// TextProxyHTML is AgentChaos's page of an nginx whose upstream failed.
	TextProxyHTML = "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx/1.24.0</center></body></html>"
)

// The delays of the compound faults.
const (
	DegradationDelay  = 3 * time.Second
	SlowResponseDelay = 5 * time.Second
)

// NoModelFault is the clean run's model fault.
const NoModelFault = spec.NoModelFault

// ToolCall is one tool call in a model's response.
type ToolCall struct {
	ID   string
	Name string
	// Arguments is the JSON text of the arguments.
	Arguments string
}

// ModelMessage is a model's response as every API's codec normalizes it.
type ModelMessage struct {
	Text      string
	ToolCalls []ToolCall
	// FinishReason is normalized: stop, length, tool_calls or content_filter.
	FinishReason string
}

func (m ModelMessage) clone() ModelMessage {
	m.ToolCalls = slices.Clone(m.ToolCalls)
	return m
}

func (m ModelMessage) equal(o ModelMessage) bool {
	return m.Text == o.Text && m.FinishReason == o.FinishReason && slices.Equal(m.ToolCalls, o.ToolCalls)
}

// ModelContext is what a model fault may know beyond the response itself.
type ModelContext struct {
	Seed     int64
	Position string
	Attempt  int
	// StaleValues are values the conversation used earlier or the spec declares, per
	// argument name, oldest first.
	StaleValues map[string][]any
	// Entities are other entities of the same kind, per argument name.
	Entities map[string][]string
}

// Mutation is what a model fault did to one response.
type Mutation struct {
	// Delay is how long the response is held before the agent receives it.
	Delay time.Duration
	// What says, in words, what the fault did.
	What string
}

// ModelFault is one entry of the model catalogue, for `chaos faults --model`.
type ModelFault struct {
	Name string
	// What is one line on what the agent receives.
	What string
	// Needs is the part of a turn the fault changes: NeedsText, NeedsToolCalls or
	// NeedsAny. A fault that fires on a turn without it fails the episode (TurnLacks):
	// it is never a quiet no-op.
	Needs string
}

// The parts of a model turn a fault may need (ModelFault.Needs).
const (
	NeedsText      = "text"
	NeedsToolCalls = "tool calls"
	NeedsAny       = "any"
)

// TurnLacks is a model fault that fired on a turn without the part it needs: a text
// fault on a turn of tool calls only, a tool-call fault on a turn of text only.
type TurnLacks struct {
	Fault string
	// Needs is the fault's ModelFault.Needs; Had says what the turn held instead.
	Needs, Had string
}

func (e *TurnLacks) Error() string {
	return fmt.Sprintf("%s: needs a turn with %s, and this turn had %s", e.Fault, e.Needs, e.Had)
}

// LacksHow is what a record's hit says (Hit.How) of a fault refused by a turn without
// the part it needs; LackedPart reads it back.
func LacksHow(needs string) string { return lacksPrefix + needs }

// LackedPart is the part a refused fault needed, from its hit's How (ok false when the
// refusal was for another reason).
func LackedPart(how string) (needs string, ok bool) { return strings.CutPrefix(how, lacksPrefix) }

const lacksPrefix = "the turn lacks "

// ModelFaultNeeds is the part of a turn the named model fault needs ("" when unknown).
func ModelFaultNeeds(name string) string {
	f, _ := lookupModel(name)
	return f.Needs
}

// turnLacks says what a turn holds when it lacks the part needs names ("" when it has it).
func turnLacks(m ModelMessage, needs string) string {
	var names []string
	for _, tc := range m.ToolCalls {
		names = append(names, tc.Name)
	}
	had := "no text and no tool call"
	switch {
	case m.Text != "" && len(names) > 0:
		return ""
	case m.Text != "":
		had = "only text, no tool call"
	case len(names) > 0:
		had = "only tool calls (" + strings.Join(names, ", ") + "), no text"
	}
	switch {
	case needs == NeedsText && m.Text == "", needs == NeedsToolCalls && len(names) == 0:
		return had
	}
	return ""
}

type modelFault struct {
	ModelFault
	apply func(m *ModelMessage, mc ModelContext) (Mutation, error)
}

// modelCatalogue is in the order of the table, none last.
//
// The faults that replace or cut the message text (llm_error, llm_timeout, llm_empty,
// llm_truncate, llm_schema, compound_api_degradation, compound_max_tokens,
// compound_proxy_html, compound_content_filter) drop the response's tool calls too, and
// fire on a response that has tool calls. AgentChaos does not fire its content faults
// where tool calls exist (it sets the content and would leave the calls beside an error
// text). Here the whole message is replaced, as a real 500, timeout, HTML page or cut-off
// stream replaces it, and whether a fault fires stays a function of the seed and the
// position alone, not of what the model happened to answer there. A fault that changes
// the text (llm_truncate_single, llm_corrupt_single, compound_max_tokens) needs a turn
// with text, one that changes a tool call needs a turn with one (Needs): fired on a turn
// without it, the fault fails the episode, and the trial says which part the turn lacked.
var modelCatalogue = []modelFault{
	{ModelFault{"llm_error_single", "the message replaced by an HTTP 500 error text; its tool calls dropped", NeedsAny}, replaceWith(TextModelError, "the 500 error text", 0)},
	{ModelFault{"llm_timeout_single", "the message replaced by a request-timed-out text; its tool calls dropped", NeedsAny}, replaceWith(TextModelTimeout, "the timeout text", 0)},
	{ModelFault{"llm_empty_single", "an empty message: no text, no tool call", NeedsAny}, empty},
	{ModelFault{"llm_truncate_single", "the text cut to its first 30%, finish reason length; its tool calls dropped", NeedsText}, cutText(3, 10, "30%")},
	{ModelFault{"llm_corrupt_single", "the text garbled: its UTF-8 bytes decoded as Latin-1", NeedsText}, latin1},
	{ModelFault{"llm_schema_single", "the message replaced by a JSON content-policy error; its tool calls dropped", NeedsAny}, replaceWith(TextModelSchema, "a JSON content-policy error", 0)},
	{ModelFault{"tool_error_single", "the first tool call's arguments replaced by {}", NeedsToolCalls}, setArgs("{}")},
	{ModelFault{"tool_timeout_single", "the first tool call dropped, with a connection-dropped text", NeedsToolCalls}, dropFirstCall},
	{ModelFault{"tool_empty_single", "no tool calls at all", NeedsToolCalls}, noToolCalls},
	{ModelFault{"tool_truncate_single", "every string in the first tool call's arguments cut to its first 30%", NeedsToolCalls}, truncateArgs},
	{ModelFault{"tool_corrupt_single", "a fifth of the characters of each string in the first tool call's arguments replaced by symbols", NeedsToolCalls}, corruptArgs},
	{ModelFault{"tool_schema_single", `the first tool call's arguments replaced by {"wrong_param": "unexpected_value"}`, NeedsToolCalls}, setArgs(ArgsWrongSchema)},
	{ModelFault{"compound_api_degradation", "a 3 s delay, then the message replaced by an HTTP 503 text; its tool calls dropped", NeedsAny}, replaceWith(TextServiceUnavailable, "the 503 text", DegradationDelay)},
	{ModelFault{"compound_content_filter", "no tool calls, a content-filter text, finish reason content_filter", NeedsAny}, contentFilter},
	{ModelFault{"compound_max_tokens", "the text cut to half, finish reason length; its tool calls dropped", NeedsText}, cutText(1, 2, "half")},
	{ModelFault{"compound_proxy_html", "the message replaced by an nginx 502 Bad Gateway HTML page; its tool calls dropped", NeedsAny}, replaceWith(TextProxyHTML, "an nginx 502 HTML page", 0)},
	{ModelFault{"compound_stale_data", "the first tool call's argument values replaced by stale ones", NeedsToolCalls}, staleData},
	{ModelFault{"compound_wrong_entity", "the first tool call's identifying argument replaced by another entity of the same kind", NeedsToolCalls}, wrongEntity},
	{ModelFault{"compound_slow_response", "a 5 s delay, the response otherwise unchanged", NeedsAny}, slowResponse},
	{ModelFault{NoModelFault, "nothing: the clean run", NeedsAny}, func(*ModelMessage, ModelContext) (Mutation, error) {
		return Mutation{What: "nothing"}, nil
	}},
}

// The spec loader checks model.fault against this catalogue.
func init() { spec.RegisterModelFaults(KnownModelFault, ModelFaultNames) }

// ModelFaults lists the model catalogue in table order.
func ModelFaults() []ModelFault {
	out := make([]ModelFault, len(modelCatalogue))
	for i, f := range modelCatalogue {
		out[i] = f.ModelFault
	}
	return out
}

// ModelFaultNames lists the names of the model catalogue, for messages.
func ModelFaultNames() []string {
	out := make([]string, len(modelCatalogue))
	for i, f := range modelCatalogue {
		out[i] = f.Name
	}
	return out
}

// KnownModelFault reports whether name is in the model catalogue.
func KnownModelFault(name string) bool {
	_, ok := lookupModel(name)
	return ok
}

func lookupModel(name string) (modelFault, bool) {
	for _, f := range modelCatalogue {
		if f.Name == name {
			return f, true
		}
	}
	return modelFault{}, false
}

// ApplyModelFault mutates m. It returns an error when the fault cannot apply (no tool
// call to break, no text to cut, a mutation that changes nothing), and then leaves m
// as it was: never a quiet no-op.
func ApplyModelFault(name string, m *ModelMessage, mc ModelContext) (Mutation, error) {
	f, ok := lookupModel(name)
	if !ok {
		return Mutation{}, fmt.Errorf("unknown model fault %q (known: %s)", name, strings.Join(ModelFaultNames(), ", "))
	}
	if m == nil {
		return Mutation{}, fmt.Errorf("%s: no response to mutate", name)
	}
	if had := turnLacks(*m, f.Needs); had != "" {
		return Mutation{}, &TurnLacks{Fault: name, Needs: f.Needs, Had: had}
	}
	c := m.clone()
	mut, err := f.apply(&c, mc)
	if err != nil {
		return Mutation{}, fmt.Errorf("%s: %w", name, err)
	}
	if name != NoModelFault && mut.Delay == 0 && c.equal(*m) {
		return Mutation{}, fmt.Errorf("%s: the mutation changes nothing in this response", name)
	}
	*m = c
	return mut, nil
}

// DecideModel reports whether the model fault fires on the call at position (its
// attempt-th try). It is pure: a call is eligible when steps is empty or names its
// position, and fires with probability rate, drawn from the seed, the position and
// the attempt only, never from a count of calls, so calls added at other positions do
// not move the decision.
func DecideModel(seed int64, rate float64, steps []string, position string, attempt int) bool {
	if len(steps) > 0 && !slices.Contains(steps, position) {
		return false
	}
	if rate <= 0 {
		return false
	}
	if rate >= 1 {
		return true
	}
	return unit(seed, "model", Position{Tool: position, Call: attempt}) < rate
}

// The mutations, one per catalogue entry (some shared with parameters).

// replaceWith replaces the whole message (text and tool calls) with text: what an
// error in place of an answer looks like to a client that only reads the message.
func replaceWith(text, what string, delay time.Duration) func(*ModelMessage, ModelContext) (Mutation, error) {
	return func(m *ModelMessage, _ ModelContext) (Mutation, error) {
		how := "replaced the message with " + what
		if n := len(m.ToolCalls); n > 0 {
			how += fmt.Sprintf(" (dropping %s)", plural(n, "tool call"))
		}
		if delay > 0 {
			how = fmt.Sprintf("waited %s, then %s", delay, how)
		}
		*m = ModelMessage{Text: text, FinishReason: FinishStop}
		return Mutation{Delay: delay, What: how}, nil
	}
}

func empty(m *ModelMessage, _ ModelContext) (Mutation, error) {
	if m.Text == "" && len(m.ToolCalls) == 0 {
		return Mutation{}, errors.New("the message is already empty")
	}
	*m = ModelMessage{FinishReason: FinishStop}
	return Mutation{What: "emptied the message"}, nil
}

// cutText keeps the first num/den of the text's characters (at least one) and drops
// what came after it, tool calls included; the finish reason says the limit was hit.
func cutText(num, den int, share string) func(*ModelMessage, ModelContext) (Mutation, error) {
	return func(m *ModelMessage, _ ModelContext) (Mutation, error) {
		if m.Text == "" {
			return Mutation{}, errors.New("the response has no text to cut")
		}
		n := utf8.RuneCountInString(m.Text)
		before := m.Text
		m.Text = firstRunes(m.Text, max(n*num/den, 1))
		how := fmt.Sprintf("cut the text to its first %s (%d of %d characters), finish length", share, utf8.RuneCountInString(m.Text), n)
		if k := len(m.ToolCalls); k > 0 {
			how += fmt.Sprintf(", dropping %s", plural(k, "tool call"))
		}
		m.ToolCalls = nil
		m.FinishReason = FinishLength
		if m.Text == before {
			how = "kept the 1-character text, finish length"
		}
		return Mutation{What: how}, nil
	}
}

func latin1(m *ModelMessage, _ ModelContext) (Mutation, error) {
	if m.Text == "" {
		return Mutation{}, errors.New("the response has no text to garble")
	}
	var b strings.Builder
	changed := false
	for i := 0; i < len(m.Text); i++ {
		c := m.Text[i]
		if c >= 0x80 {
			changed = true
		}
		b.WriteRune(rune(c))
	}
	if !changed {
		return Mutation{}, errors.New("the text is plain ASCII, which decodes the same as Latin-1: the mutation changes nothing")
	}
	m.Text = b.String()
	return Mutation{What: "garbled the text: its UTF-8 bytes decoded as Latin-1"}, nil
}

func contentFilter(m *ModelMessage, _ ModelContext) (Mutation, error) {
	how := "replaced the message with the content-filter text, finish content_filter"
	if n := len(m.ToolCalls); n > 0 {
		how += fmt.Sprintf(" (dropping %s)", plural(n, "tool call"))
	}
	*m = ModelMessage{Text: TextContentFiltered, FinishReason: FinishContentFilter}
	return Mutation{What: how}, nil
}

func slowResponse(*ModelMessage, ModelContext) (Mutation, error) {
	return Mutation{Delay: SlowResponseDelay, What: fmt.Sprintf("held the response %s", SlowResponseDelay)}, nil
}

func firstCall(m *ModelMessage) (*ToolCall, error) {
	if len(m.ToolCalls) == 0 {
		return nil, errors.New("the response has no tool call to break")
	}
	return &m.ToolCalls[0], nil
}

func setArgs(args string) func(*ModelMessage, ModelContext) (Mutation, error) {
	return func(m *ModelMessage, _ ModelContext) (Mutation, error) {
		tc, err := firstCall(m)
		if err != nil {
			return Mutation{}, err
		}
		tc.Arguments = args
		return Mutation{What: fmt.Sprintf("replaced the arguments of %s with %s", tc.Name, args)}, nil
	}
}

func dropFirstCall(m *ModelMessage, _ ModelContext) (Mutation, error) {
	tc, err := firstCall(m)
	if err != nil {
		return Mutation{}, err
	}
	name := tc.Name
	m.ToolCalls = slices.Clone(m.ToolCalls[1:])
	if len(m.ToolCalls) == 0 {
		m.ToolCalls = nil
	}
	m.Text = TextToolTimeout
	m.FinishReason = FinishStop
	if len(m.ToolCalls) > 0 {
		m.FinishReason = FinishToolCalls
	}
	return Mutation{What: fmt.Sprintf("dropped the tool call %s and answered the connection-dropped text", name)}, nil
}

func noToolCalls(m *ModelMessage, _ ModelContext) (Mutation, error) {
	if len(m.ToolCalls) == 0 {
		return Mutation{}, errors.New("the response has no tool call to remove")
	}
	var names []string
	for _, tc := range m.ToolCalls {
		names = append(names, tc.Name)
	}
	m.ToolCalls = nil
	if m.FinishReason == FinishToolCalls {
		m.FinishReason = FinishStop
	}
	return Mutation{What: "removed the tool calls: " + strings.Join(names, ", ")}, nil
}

func truncateArgs(m *ModelMessage, _ ModelContext) (Mutation, error) {
	tc, err := firstCall(m)
	if err != nil {
		return Mutation{}, err
	}
	seen, n := 0, 0
	out, err := mapArgStrings(tc.Arguments, func(_ int, s string) string {
		seen++
		cut := firstRunes(s, max(utf8.RuneCountInString(s)*3/10, 1))
		if cut != s {
			n++
		}
		return cut
	})
	if err != nil {
		return Mutation{}, fmt.Errorf("the arguments of %s: %w", tc.Name, err)
	}
	if seen == 0 {
		return Mutation{}, fmt.Errorf("the arguments of %s have no string value to cut", tc.Name)
	}
	if n == 0 {
		return Mutation{}, fmt.Errorf("every string value in the arguments of %s is too short to cut: the mutation changes nothing", tc.Name)
	}
	tc.Arguments = out
	return Mutation{What: fmt.Sprintf("cut %s in the arguments of %s to their first 30%%", plural(n, "string value"), tc.Name)}, nil
}

// corruptArgs replaces about a fifth of the characters (at least one) of each string
// value with symbols from U+2600 to U+26FF. Which characters and which symbols are
// drawn from the seed, the position and the value's place: the same call is always
// corrupted the same way.
func corruptArgs(m *ModelMessage, mc ModelContext) (Mutation, error) {
	tc, err := firstCall(m)
	if err != nil {
		return Mutation{}, err
	}
	values, chars := 0, 0
	out, err := mapArgStrings(tc.Arguments, func(i int, s string) string {
		rs := []rune(s)
		if len(rs) == 0 {
			return s
		}
		r := newSplitmix(mc.Seed, mc.Position, mc.Attempt, i)
		k := max((len(rs)*2+5)/10, 1) // a fifth, rounded
		idx := make([]int, len(rs))
		for j := range idx {
			idx[j] = j
		}
		for j := 0; j < k; j++ { // the first k of a partial Fisher-Yates shuffle
			p := j + r.intn(len(rs)-j)
			idx[j], idx[p] = idx[p], idx[j]
			rs[idx[j]] = rune(0x2600 + r.intn(0x100))
		}
		values++
		chars += k
		return string(rs)
	})
	if err != nil {
		return Mutation{}, fmt.Errorf("the arguments of %s: %w", tc.Name, err)
	}
	if values == 0 {
		return Mutation{}, fmt.Errorf("the arguments of %s have no string value to corrupt", tc.Name)
	}
	tc.Arguments = out
	return Mutation{What: fmt.Sprintf("replaced %s in %s of the arguments of %s with symbols", plural(chars, "character"), plural(values, "string value"), tc.Name)}, nil
}

// staleData replaces every top-level argument for which a stale value is known with
// the most recent stale value that differs from the one the model chose.
func staleData(m *ModelMessage, mc ModelContext) (Mutation, error) {
	return substitute(m, "stale value", func(key string, cur []byte) (any, bool) {
		vs := mc.StaleValues[key]
		for i := len(vs) - 1; i >= 0; i-- {
			if !sameJSON(vs[i], cur) {
				return vs[i], true
			}
		}
		return nil, false
	}, false)
}

// wrongEntity replaces one argument, the one that identifies what the call acts on,
// with the first other entity of the same kind.
func wrongEntity(m *ModelMessage, mc ModelContext) (Mutation, error) {
	return substitute(m, "other entity", func(key string, cur []byte) (any, bool) {
		for _, e := range mc.Entities[key] {
			if !sameJSON(e, cur) {
				return e, true
			}
		}
		return nil, false
	}, true)
}

func substitute(m *ModelMessage, kind string, alt func(key string, cur []byte) (any, bool), one bool) (Mutation, error) {
	tc, err := firstCall(m)
	if err != nil {
		return Mutation{}, err
	}
	fields, err := argFields(tc.Arguments)
	if err != nil {
		return Mutation{}, fmt.Errorf("the arguments of %s: %w", tc.Name, err)
	}
	type change struct {
		i  int
		to any
	}
	var changes []change
	for i, f := range fields {
		if to, ok := alt(f.key, f.raw); ok {
			changes = append(changes, change{i, to})
		}
	}
	if len(changes) == 0 {
		var keys []string
		for _, f := range fields {
			keys = append(keys, f.key)
		}
		if len(keys) == 0 {
			return Mutation{}, fmt.Errorf("the arguments of %s are empty: no %s to put in", tc.Name, kind)
		}
		return Mutation{}, fmt.Errorf("no %s known for the arguments of %s (%s)", kind, tc.Name, strings.Join(keys, ", "))
	}
	if one {
		pick := changes[0]
		for _, c := range changes {
			if identifying(fields[c.i].key) {
				pick = c
				break
			}
		}
		changes = []change{pick}
	}
	var hows []string
	for _, c := range changes {
		raw, err := marshalJSON(c.to)
		if err != nil {
			return Mutation{}, fmt.Errorf("the %s for %s: %w", kind, fields[c.i].key, err)
		}
		hows = append(hows, fmt.Sprintf("%s %s → %s", fields[c.i].key, fields[c.i].raw, raw))
		fields[c.i].raw = raw
	}
	// Only the substituted values change: the rest of the arguments stay the model's bytes.
	root, ok := parseJSONText(tc.Arguments)
	if !ok || root.kind != '{' || len(root.members) != len(fields) {
		return Mutation{}, fmt.Errorf("the arguments of %s: they are not a JSON object", tc.Name)
	}
	var edits []edit
	for _, c := range changes {
		v := root.members[c.i].val
		edits = append(edits, edit{v.start, v.end, string(fields[c.i].raw)})
	}
	tc.Arguments = applyEdits(tc.Arguments, 0, len(tc.Arguments), edits)
	return Mutation{What: fmt.Sprintf("put the %s into the arguments of %s: %s", kind, tc.Name, strings.Join(hows, ", "))}, nil
}

// identifying says whether an argument name looks like it names the entity a call
// acts on (an id, an email, an account).
func identifying(key string) bool {
	k := strings.ToLower(key)
	if k == "id" || k == "key" || strings.HasSuffix(k, "_id") || strings.HasSuffix(k, "_key") ||
		strings.HasSuffix(key, "Id") || strings.HasSuffix(key, "ID") {
		return true
	}
	for _, w := range []string{"email", "account", "customer", "user", "ticket", "order", "entity", "city", "name"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// JSON helpers for arguments, which are JSON text and keep their key order.

type argField struct {
	key string
	raw []byte // compact JSON
}

// argFields reads the top-level fields of a JSON object, in order.
func argFields(args string) ([]argField, error) {
	dec := json.NewDecoder(strings.NewReader(args))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, errors.New("they are not a JSON object")
	}
	var out []argField
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, errors.New("they are not valid JSON")
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, errors.New("they are not valid JSON")
		}
		var c bytes.Buffer
		json.Compact(&c, raw)
		out = append(out, argField{key: kt.(string), raw: c.Bytes()})
	}
	if _, err := dec.Token(); err != nil {
		return nil, errors.New("they are not valid JSON")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("they are not valid JSON")
	}
	return out, nil
}

// mapArgStrings applies fn to every string value (not to keys) of the JSON text args, in
// the text's order (i numbers them), and changes nothing else: keys, their order, numbers
// and spacing stay the model's own bytes.
func mapArgStrings(args string, fn func(i int, s string) string) (string, error) {
	root, ok := parseJSONText(args)
	if !ok {
		return "", errors.New("they are not valid JSON")
	}
	var edits []edit
	n := 0
	var walk func(v *jnode)
	walk = func(v *jnode) {
		switch v.kind {
		case '{':
			for _, m := range v.members {
				walk(m.val)
			}
		case '[':
			for _, e := range v.elems {
				walk(e)
			}
		case '"':
			if out := fn(n, v.str); out != v.str {
				edits = append(edits, edit{v.start, v.end, jsonString(out)})
			}
			n++
		}
	}
	walk(root)
	return applyEdits(args, 0, len(args), edits), nil
}

// marshalJSON encodes v without escaping <, > and &, as the model APIs do.
func marshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func sameJSON(v any, raw []byte) bool {
	b, err := marshalJSON(v)
	if err != nil {
		return false
	}
	var x, y any
	if json.Unmarshal(b, &x) != nil || json.Unmarshal(raw, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

func firstRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// splitmix is a small generator with a sequence fixed here, so a corrupted value
// stays the same across Go releases (goldens depend on it).
type splitmix struct{ x uint64 }

func newSplitmix(seed int64, position string, attempt, i int) *splitmix {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(seed))
	h.Write(b[:])
	fmt.Fprintf(h, "|corrupt|%s|%d|%d", position, attempt, i)
	return &splitmix{x: h.Sum64()}
}

func (s *splitmix) next() uint64 {
	s.x += 0x9e3779b97f4a7c15
	z := s.x
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func (s *splitmix) intn(n int) int { return int(s.next() % uint64(n)) }
