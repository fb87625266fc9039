// Package hub is the truth of one trial behind every wall: the tool source, the armed
// condition and its decisions, and the record. The tool source is the spec's simulated
// world or real servers (proxies/upstream); every transport (proxies/stdio,
// proxies/httpwall, proxies/upstream's proxy) is a thin adapter over Hub.Call.
//
//	agent ──MCP stdio──> relay / chaos wall ──┐
//	agent ──MCP HTTP──────────────────────────┼──> Hub.Call ──> faults.Decide ──> ToolSource
//	agent ──REST POST /tools/<name>───────────┘        └──> record (one row per call)
package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// Config is what a hub needs. Nil Record means a record that keeps nothing.
type Config struct {
	Spec      *spec.Spec
	Condition faults.Condition
	Seed      int64
	Trial     string
	Record    *record.Writer
	// Source is what stands behind the wall (nil: the spec's simulated world). The hub
	// closes it when it closes, if it is an io.Closer.
	Source ToolSource
	// Prior are calls made before this hub that its fault's positions continue from
	// (chaos run --branch: the clean trial's calls before the branch point).
	Prior []Prior
}

// Hub is the per-trial server: it answers tool calls from any transport, applies the
// armed fault, keeps the world and writes the record. It is safe for concurrent use.
type Hub struct {
	spec    *spec.Spec
	cond    faults.Condition
	seed    int64
	world   ToolSource
	rec     *record.Writer
	schemas map[string]*jsonschema.Resolved

	mu sync.Mutex
	// count gives each call its position (positions.go).
	count counter
	total int
	fired int
	// reach counts what came to the wall besides tool calls (report.Reach reads it).
	reach  Reach
	closed bool
	// dropped: a session_drop fired; revived: the operator logged in since (login.go).
	dropped, revived bool
	// inflight counts the calls the world is answering (without mu held).
	inflight sync.WaitGroup

	// subMu guards the subscriptions. The record writer calls publish with its own lock
	// held, so nothing here may take the writer's lock while holding subMu.
	subMu      sync.Mutex
	subs       map[int]chan *record.Row
	nextSub    int
	subsClosed bool
}

// CallError is a call the hub refused before it reached a tool: an unknown tool or
// arguments that do not match the tool's schema. Transports map it to their own
// error (a JSON-RPC error, a 400 or 404).
type CallError struct {
	// Status is 400 for bad arguments, 404 for an unknown tool.
	Status int
	Msg    string
}

func (e *CallError) Error() string { return e.Msg }

// ErrClosed is returned for calls after the hub was closed.
var ErrClosed = errors.New("the trial has ended: the wall is closed")

// NewHub builds the hub for one trial and writes the session start.
func NewHub(cfg Config) (*Hub, error) {
	if cfg.Spec == nil {
		return nil, errors.New("hub: no spec")
	}
	rec := cfg.Record
	if rec == nil {
		rec = record.Discard()
	}
	src := cfg.Source
	if src == nil {
		src = world.New(cfg.Spec)
	}
	h := &Hub{
		spec: cfg.Spec, cond: cfg.Condition, seed: cfg.Seed,
		world: src, rec: rec,
		schemas: map[string]*jsonschema.Resolved{},
		count:   newCounter(),
		subs:    map[int]chan *record.Row{},
	}
	if h.cond.ID == "" {
		h.cond = faults.Condition{ID: faults.CleanID, SuccessPossible: true}
	}
	h.count.replay(cfg.Spec, &h.cond, cfg.Seed, cfg.Prior)
	for _, t := range cfg.Spec.Tools {
		r, err := resolveSchema(t)
		if err != nil && t.Server != "" {
			continue // a real server checks its own arguments
		}
		if err != nil {
			return nil, fmt.Errorf("tool %q: input schema: %w", t.Name, err)
		}
		h.schemas[t.Name] = r
	}
	rec.OnRow(h.publish)
	if f, ok := src.(failureReporter); ok {
		f.OnFailure(func(reason string) { h.RecordError("", UpstreamFailurePrefix+reason) })
	}
	var names, writes []string
	behind := false
	for _, t := range cfg.Spec.Tools {
		names = append(names, t.Name)
		behind = behind || t.Server != ""
		if t.Effect == spec.EffectWrite {
			writes = append(writes, t.Name)
		}
	}
	if !behind {
		writes = nil // the simulated world's state says what was written
	}
	possible := h.cond.SuccessPossible
	start := record.Row{
		Type: record.TypeSessionStart, Trial: cfg.Trial, Condition: h.cond.ID, Seed: cfg.Seed,
		Tools: names, Writes: writes, InitialState: h.world.State(), SuccessPossible: &possible,
	}
	if !h.cond.Clean() {
		start.Fault = &record.Fault{Condition: h.cond.ID, Family: h.cond.Family, Variant: h.cond.Variant, Tool: h.cond.Tool, What: h.cond.What}
	}
	if _, err := rec.Write(start); err != nil {
		return nil, err
	}
	return h, nil
}

func resolveSchema(t spec.Tool) (*jsonschema.Resolved, error) {
	raw := InputSchema(t)
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	return s.Resolve(nil)
}

// InputSchema is the tool's input schema, or the one its key and value fields imply.
func InputSchema(t spec.Tool) json.RawMessage {
	if len(t.InputSchema) > 0 {
		return t.InputSchema
	}
	props := map[string]any{}
	var req []string
	switch t.Effect {
	case spec.EffectWrite:
		if t.Key == "" {
			props[t.KeyFieldName()] = map[string]string{"type": "string"}
			req = append(req, t.KeyFieldName())
		}
		props[t.ValueFieldName()] = map[string]string{"type": "string"}
		req = append(req, t.ValueFieldName())
	case spec.EffectRead:
		if t.Key == "" {
			props[t.KeyFieldName()] = map[string]string{"type": "string"}
			req = append(req, t.KeyFieldName())
		}
	}
	s := map[string]any{"type": "object", "properties": props}
	if len(req) > 0 {
		s["required"] = req
	}
	b, _ := json.Marshal(s)
	return b
}

// Spec is the hub's spec.
func (h *Hub) Spec() *spec.Spec { return h.spec }

// Condition is the armed condition.
func (h *Hub) Condition() faults.Condition { return h.cond }

// Tools are the tools the hub serves, in spec order.
func (h *Hub) Tools() []spec.Tool { return h.world.Tools() }

// Knows says whether the hub serves a tool of that name.
func (h *Hub) Knows(name string) bool {
	_, ok := h.world.Tool(name)
	return ok
}

// InMemory says whether every call is answered from memory (the spec's simulated world,
// not real servers): a call then never waits on anything but the record's write, and a
// transport may run it on its reading goroutine.
func (h *Hub) InMemory() bool {
	_, ok := h.world.(*world.World)
	return ok
}

// State is a copy of the world's current state.
func (h *Hub) State() map[string]any { return h.world.State() }

// Source is what stands behind the wall: the simulated world or real servers.
func (h *Hub) Source() ToolSource { return h.world }

// Call runs one tool call from a transport and returns what the agent receives.
// A refused call (unknown tool, bad arguments) returns a *CallError and is recorded
// as a rejected row; a tool failure is a Reply with IsError, not an error.
func (h *Hub) Call(ctx context.Context, transport, name string, rawArgs json.RawMessage) (world.Reply, error) {
	return h.call(ctx, transport, name, rawArgs, nil)
}

// call is Call; shape, when given, adds to the call's row what the transport made of the
// reply (a shimmed command's exit code and output) before the row is written.
func (h *Hub) call(ctx context.Context, transport, name string, rawArgs json.RawMessage, shape func(world.Reply, *record.Row)) (world.Reply, error) {
	t, ok := h.world.Tool(name)
	if !ok {
		return h.reject(transport, name, rawArgs, &CallError{Status: 404, Msg: fmt.Sprintf("unknown tool %q (tools: %s)", name, h.toolList())})
	}
	args, err := h.validate(t, rawArgs)
	if err != nil {
		return h.reject(transport, name, rawArgs, &CallError{Status: 400, Msg: fmt.Sprintf("arguments of %s: %v", name, err)})
	}

	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return world.Reply{}, ErrClosed
	}
	h.total++
	pos := h.count.next(h.spec, &h.cond, t)
	fires := h.fires(pos) // login.go
	h.inflight.Add(1)
	h.mu.Unlock()
	defer h.inflight.Done()
	// The call's position and its fault's decision were taken in the order the calls
	// came; the world answers without the hub's lock, so that a real server's slow call
	// holds up no other call of the agent's. The row is written once it has answered.
	row := record.Row{Type: record.TypeCall, Transport: transport, Tool: name, Args: compact(rawArgs)}
	var reply world.Reply
	if fires {
		fam, _ := faults.Lookup(h.cond.Family)
		out := fam.Family.Apply(ctx, h.cond, h.seed, faults.Request{Tool: t, Args: args, Pos: pos}, h.world)
		if out.Err != nil {
			h.rec.Write(record.Row{Type: record.TypeError, Tool: name, Args: row.Args, Reason: out.Err.Error()})
			return world.Failure(500, "chaos: "+out.Err.Error()), nil
		}
		reply = out.Reply
		if out.Performed {
			reply = damagedStructured(fam.Family, reply, out.Real)
		}
		row.Hit = &record.Hit{Fired: true, Family: h.cond.Family, How: out.How, Performed: out.Performed}
		if out.Real.Text != reply.Text || out.Real.IsError != reply.IsError {
			row.RealReply = out.Real.Text
			if !out.Performed {
				row.RealReply = ""
			}
		}
	} else {
		reply = h.world.Call(ctx, t, args, world.Perform)
		if !h.cond.Clean() {
			row.Hit = &record.Hit{Fired: false, Performed: true}
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if fires {
		h.fired++
	}
	h.count.answered(t, reply.IsError)
	row.Reply, row.IsError, row.Status = reply.Text, reply.IsError, reply.Status
	if reply.Structured != "" {
		row.Structured = json.RawMessage(reply.Structured)
	}
	row.State = h.world.State()
	if shape != nil {
		shape(reply, &row)
	}
	if _, err := h.rec.Write(row); err != nil && !errors.Is(err, record.ErrClosed) {
		return reply, fmt.Errorf("record: %w", err)
	}
	return reply, nil
}

func (h *Hub) reject(transport, name string, raw json.RawMessage, e *CallError) (world.Reply, error) {
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed {
		return world.Reply{}, ErrClosed
	}
	h.rec.Write(record.Row{Type: record.TypeRejected, Transport: transport, Tool: name, Args: compact(raw), Reason: e.Msg, Status: e.Status})
	return world.Reply{}, e
}

// RecordError writes a server error row (a transport that could not serve a request).
func (h *Hub) RecordError(transport, reason string) {
	h.rec.Write(record.Row{Type: record.TypeError, Transport: transport, Reason: reason})
}

func (h *Hub) validate(t spec.Tool, raw json.RawMessage) (map[string]any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	args, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("must be a JSON object, got %s", jsonKind(v))
	}
	if r := h.schemas[t.Name]; r != nil {
		if err := r.Validate(args); err != nil {
			return nil, err
		}
	}
	return args, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "something else"
}

func (h *Hub) toolList() string {
	var names []string
	for _, t := range h.world.Tools() {
		names = append(names, t.Name)
	}
	sort.Strings(names)
	b, _ := json.Marshal(names)
	return string(b)
}

// compact is the arguments as the record keeps them: compact JSON, or the raw text
// as a JSON string when it is not JSON.
func compact(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		b, _ := json.Marshal(string(raw))
		return b
	}
	return buf.Bytes()
}

// Stats are the hub's counts so far.
type Stats struct {
	Calls int `json:"calls"`
	Fired int `json:"fired"`
	Reach
}

// Reach counts the agent's contacts with the wall other than tool calls, so that a trial
// without a tool call can say how far the agent got: never connected, connected without
// completing MCP's initialize, or initialized and called nothing. Over stdio the wall's
// bridge initializes its own session with the hub when the agent starts it, so there
// "initialized" means the agent started the wall.
type Reach struct {
	// Contacts counts requests of any kind: MCP messages, REST calls, tool listings.
	Contacts int `json:"contacts"`
	// Initializing counts MCP initialize requests; Initialized the messages that show a
	// client past the handshake (notifications/initialized, or any request of a
	// sessionless client). The wall needs only whether either is zero.
	Initializing int `json:"initializing"`
	Initialized  int `json:"initialized"`
}

// Contact counts one request to the wall; method is its MCP method ("" for REST).
func (h *Hub) Contact(method string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reach.Contacts++
	switch {
	case method == "initialize":
		h.reach.Initializing++
	case method == "notifications/initialized",
		// A client of the sessionless protocol (2026-07-28) has no handshake: any
		// request of its shows it ready.
		method != "" && method != "ping" && !strings.HasPrefix(method, "notifications/"):
		h.reach.Initialized++
	}
}

// Stats returns the counts of calls and of calls on which the fault fired.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	return Stats{Calls: h.total, Fired: h.fired, Reach: h.reach}
}

// Close ends the session: it writes the session end with the final state (once, on
// whichever ending comes first) and ends every event subscription.
func (h *Hub) Close(reason string) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	h.mu.Unlock()
	// The calls the world is answering end first (a real server's within its call
	// timeout), so that the session's end follows their rows and its final state has
	// their writes.
	h.inflight.Wait()
	h.mu.Lock()
	end := record.Row{Reason: reason, FinalState: h.world.State(), Calls: h.total, Fired: h.fired}
	h.mu.Unlock()
	err := h.rec.Close(end)
	if c, ok := h.world.(io.Closer); ok {
		c.Close()
	}
	h.subMu.Lock()
	h.subsClosed = true
	for id, ch := range h.subs {
		close(ch)
		delete(h.subs, id)
	}
	h.subMu.Unlock()
	return err
}

// Subscribe returns a channel of every record row written from now on, closed when the
// hub closes or cancel is called. A slow subscriber misses rows rather than slowing calls.
// The rows are shared by every subscriber: read them, never change them (pointers, so
// that an idle subscription holds no rows' worth of memory).
func (h *Hub) Subscribe() (<-chan *record.Row, func()) {
	h.subMu.Lock()
	defer h.subMu.Unlock()
	ch := make(chan *record.Row, 256)
	if h.subsClosed {
		close(ch)
		return ch, func() {}
	}
	id := h.nextSub
	h.nextSub++
	h.subs[id] = ch
	return ch, func() {
		h.subMu.Lock()
		defer h.subMu.Unlock()
		if c, ok := h.subs[id]; ok {
			close(c)
			delete(h.subs, id)
		}
	}
}

// publish is called by the record writer for every row (with h.mu possibly held by
// Call, hence the separate subMu); sends never block.
func (h *Hub) publish(r record.Row) {
	h.subMu.Lock()
	defer h.subMu.Unlock()
	if len(h.subs) == 0 {
		return
	}
	row := &r
	for _, ch := range h.subs {
		select {
		case ch <- row:
		default:
		}
	}
}
