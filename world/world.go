// Package world is the simulated world behind the wall: a flat key/value state and
// the spec's tools that answer a fixed reply, read a key or write one.
package world

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sort"
	"strings"
	"sync"

	"github.com/crashwall/chaos/spec"
)

// Mode says how a call's effect reaches the world. Faults choose it.
type Mode int

const (
	// Perform: the call does what it says.
	Perform Mode = iota
	// Skip: nothing is stored (a fabricated outcome).
	Skip
	// StoreEmpty: the key is stored with an empty value.
	StoreEmpty
	// OtherAccount: the value lands under the same key in another account.
	OtherAccount
)

// OtherAccountPrefix marks keys written into another account by a context switch.
const OtherAccountPrefix = "other-account/"

// Reply is what a tool answers.
type Reply struct {
	Text    string `json:"text"`
	IsError bool   `json:"is_error,omitempty"`
	// Status is the HTTP-like status of the answer: 200, 400, 401, 503.
	Status int `json:"status"`
	// Structured is the reply's structured content as compact JSON (an object), from a
	// real server: MCP clients such as Claude Code read it rather than the text. It is text
	// so that a Reply stays comparable.
	Structured string `json:"structured,omitempty"`
}

// OK is a successful reply with text.
func OK(text string) Reply { return Reply{Text: text, Status: 200} }

// Failure is a tool failure with a status and a message.
func Failure(status int, msg string) Reply {
	return Reply{Text: `{"error":` + encode(msg) + `}`, IsError: true, Status: status}
}

// World is the state of one trial. It is safe for concurrent use.
type World struct {
	mu    sync.Mutex
	tools map[string]spec.Tool
	order []spec.Tool
	state map[string]any
	// before holds, for each key, its value before the last write to that key (for
	// stale reads); a key never written holds its initial value.
	before map[string]any
	writes int
}

// New builds the world of a spec at its initial state.
func New(s *spec.Spec) *World {
	w := &World{tools: map[string]spec.Tool{}, state: map[string]any{}}
	for _, t := range s.Tools {
		w.tools[t.Name] = t
		w.order = append(w.order, t)
	}
	maps.Copy(w.state, Clone(s.InitialState))
	w.before = Clone(w.state)
	return w
}

// Tools returns the tools in spec order.
func (w *World) Tools() []spec.Tool { return w.order }

// Tool returns the tool with that name.
func (w *World) Tool(name string) (spec.Tool, bool) {
	t, ok := w.tools[name]
	return t, ok
}

// State returns a copy of the current state.
func (w *World) State() map[string]any {
	w.mu.Lock()
	defer w.mu.Unlock()
	return Clone(w.state)
}

// Writes is how many writes reached the world.
func (w *World) Writes() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writes
}

// Call runs tool t with args in the given mode and returns its real reply.
func (w *World) Call(_ context.Context, t spec.Tool, args map[string]any, mode Mode) Reply {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch t.Effect {
	case spec.EffectWrite:
		key, ok := t.StateKey(args)
		if !ok {
			return Failure(400, fmt.Sprintf("missing argument %q", t.KeyFieldName()))
		}
		value, ok := args[t.ValueFieldName()]
		if !ok {
			return Failure(400, fmt.Sprintf("missing argument %q", t.ValueFieldName()))
		}
		switch mode {
		case Skip:
		case StoreEmpty:
			w.store(key, "")
		case OtherAccount:
			w.store(OtherAccountPrefix+key, value)
		default:
			w.store(key, value)
		}
		return OK(ackText(t))
	case spec.EffectRead:
		key, ok := t.StateKey(args)
		if !ok {
			return Failure(400, fmt.Sprintf("missing argument %q", t.KeyFieldName()))
		}
		return OK(readText(t, key, w.state[key]))
	default:
		return OK(sourceText(t))
	}
}

// ReadBefore answers a read with the value the key held before the last write to it.
// It is per key: a write to another key since does not make the answer current.
func (w *World) ReadBefore(t spec.Tool, args map[string]any) Reply {
	w.mu.Lock()
	defer w.mu.Unlock()
	key, ok := t.StateKey(args)
	if !ok {
		return Failure(400, fmt.Sprintf("missing argument %q", t.KeyFieldName()))
	}
	return OK(readText(t, key, w.before[key]))
}

// SuccessText is what a call to t answers when it succeeds, without touching the world:
// the acknowledgement of a write, the fixed reply of a source.
func SuccessText(t spec.Tool) string {
	if t.Effect == spec.EffectWrite {
		return ackText(t)
	}
	return sourceText(t)
}

func (w *World) store(key string, v any) {
	if old, ok := w.state[key]; ok {
		w.before[key] = old
	} else {
		delete(w.before, key)
	}
	w.state[key] = v
	w.writes++
}

func ackText(t spec.Tool) string {
	if t.Reply != "" {
		return t.Reply
	}
	return `{"status": "ok"}`
}

func sourceText(t spec.Tool) string {
	if t.Reply != "" {
		return t.Reply
	}
	return `{"status": "ok"}`
}

func readText(t spec.Tool, key string, v any) string {
	return "{" + encode(t.KeyFieldName()) + ":" + encode(key) + "," + encode(t.ValueFieldName()) + ":" + encode(v) + "}"
}

// encode writes v as JSON the way servers do, without escaping <, > and & (Go's default
// turns & into the six characters \u0026, which an agent would read as part of the value).
func encode(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "null"
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Clone deep-copies a JSON-like value map.
func Clone(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	b, err := json.Marshal(m)
	if err != nil {
		out := make(map[string]any, len(m))
		maps.Copy(out, m)
		return out
	}
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	if out == nil {
		out = map[string]any{}
	}
	return out
}

// Annotations are the MCP tool annotations the wall lists for t: for a simulated tool,
// derived from its effect (a source or a read is read-only and idempotent; a write
// overwrites the value under its key, so it is destructive, and idempotent: the same call
// twice leaves the same state; none reaches outside the simulated world); for a real
// server's tool, the server's own. The spec's `annotations:` win over either. Clients
// gate on these: without them MCP's defaults make every tool a destructive, open-world
// one, and Codex refuses to call it without an approval.
func Annotations(t spec.Tool) spec.Hints {
	var h spec.Hints
	if t.Server != "" {
		if len(t.Annotations) > 0 {
			json.Unmarshal(t.Annotations, &h)
		}
	} else {
		yes, no := true, false
		switch t.Effect {
		case spec.EffectWrite:
			h = spec.Hints{ReadOnly: &no, Destructive: &yes, Idempotent: &yes, OpenWorld: &no}
		default:
			h = spec.Hints{ReadOnly: &yes, Destructive: &no, Idempotent: &yes, OpenWorld: &no}
		}
	}
	if o := t.Hints; o != nil {
		for _, p := range []struct{ dst, src **bool }{
			{&h.ReadOnly, &o.ReadOnly}, {&h.Destructive, &o.Destructive}, {&h.Idempotent, &o.Idempotent}, {&h.OpenWorld, &o.OpenWorld},
		} {
			if *p.src != nil {
				*p.dst = *p.src
			}
		}
	}
	return h
}

// Apply stores writes made by something other than a tool of the spec (a script's adapter,
// proxies/shim) as a write tool's call would in mode: nothing for Skip, "" for StoreEmpty,
// under OtherAccountPrefix for OtherAccount.
func (w *World) Apply(writes map[string]any, mode Mode) {
	w.mu.Lock()
	defer w.mu.Unlock()
	keys := make([]string, 0, len(writes))
	for k := range writes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch mode {
		case Skip:
		case StoreEmpty:
			w.store(k, "")
		case OtherAccount:
			w.store(OtherAccountPrefix+k, writes[k])
		default:
			w.store(k, writes[k])
		}
	}
}

// Value is key's value now, or before the last write to it (what a stale read answers).
func (w *World) Value(key string, before bool) any {
	w.mu.Lock()
	defer w.mu.Unlock()
	if before {
		return w.before[key]
	}
	return w.state[key]
}
