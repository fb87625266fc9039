package llm

// Codecs of the three model APIs the model proxy understands. Each reads a whole
// response into a faults.ModelMessage and writes a mutated message back into the same
// response, in the API's own shape and vocabulary, keeping every field it does not
// change (ids, model, usage, reasoning items). Streamed responses are assembled into
// the whole response first and streamed again from it (stream.go).
//
//	upstream body ──assemble (SSE)──> whole response ──decode──> ModelMessage ──fault──> ModelMessage
//	                                        └───────────────────encode (in place)────────────┘──stream (SSE)──> agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/crashwall/chaos/faults"
)

// modelAPI is one model API's wire format.
type modelAPI interface {
	// Name names the API in goldens and messages: openai-chat, openai-responses, anthropic-messages.
	Name() string
	// decode reads the message of a whole response.
	decode(resp *jsonObject) (faults.ModelMessage, error)
	// encode writes m into the whole response resp, in place.
	encode(resp *jsonObject, m faults.ModelMessage) error
	// readRequest reads what the proxy and the stand-in need from a request body.
	readRequest(req *jsonObject) modelRequest
	// skeleton is a whole response with no content yet, for the stand-in: encode fills it.
	skeleton(turn int, model string, in, out int) *jsonObject
	// callID is the stand-in's id for the tool call it makes on a turn.
	callID(turn int) string

	// assemble builds the whole response from the events of a streamed one.
	assemble(events []sseEvent) (*jsonObject, error)
	// stream writes the whole response resp as the API's stream, with text and
	// arguments split into pieces of at most chunk bytes (0: one piece each).
	stream(resp *jsonObject, chunk int) []byte
}

// modelRequest is what a request says about the conversation so far.
type modelRequest struct {
	Model  string
	Stream bool
	// IncludeUsage is OpenAI Chat's stream_options.include_usage.
	IncludeUsage bool
	// Calls are the tool calls the model made earlier in the conversation, in order.
	Calls []faults.ToolCall
	// ResultGroups counts the runs of tool results in the conversation: one per
	// turn on which the agent answered tool calls.
	ResultGroups int
	// EndsWithToolResult says the last message is a tool result, not the user.
	EndsWithToolResult bool
	// PreviousResponse is the Responses API's previous_response_id.
	PreviousResponse string
}

// see takes the conversation's next message (or item), a tool result or not: a run of
// results is one group, and the conversation ends with a result when its last is one.
func (r *modelRequest) see(result bool) {
	if result && !r.EndsWithToolResult {
		r.ResultGroups++
	}
	r.EndsWithToolResult = result
}

// The model API endpoints, matched at the end of the path so that a base URL with a
// prefix (https://gateway/openai/v1) works too.
var modelAPIs = []struct {
	suffix string
	api    modelAPI
}{
	{"/chat/completions", chatAPI{}},
	{"/responses", responsesAPI{}},
	{"/messages", messagesAPI{}},
}

// apiFor returns the codec for a model call, nil for anything else (which passes through).
func apiFor(method, path string) modelAPI {
	if method != http.MethodPost {
		return nil
	}
	for _, a := range modelAPIs {
		if strings.HasSuffix(path, a.suffix) {
			return a.api
		}
	}
	return nil
}

// standinCreated is the creation time of every stand-in response (2026-01-01), so
// that its answers are the same on every run.
const standinCreated = 1767225600

// --- ordered JSON -----------------------------------------------------------------

// jsonObject is a JSON object that keeps its keys in order, so that a re-encoded
// response differs from the upstream's only where a fault changed it. Values are
// *jsonObject, []any, string, json.Number, bool or nil (and, when set by code, any
// value encoding/json can write).
type jsonObject struct {
	keys []string
	vals map[string]any
}

// obj builds an object from key, value pairs.
func obj(kv ...any) *jsonObject {
	o := &jsonObject{vals: map[string]any{}}
	for i := 0; i+1 < len(kv); i += 2 {
		o.set(kv[i].(string), kv[i+1])
	}
	return o
}

func (o *jsonObject) get(k string) any {
	if o == nil {
		return nil
	}
	return o.vals[k]
}

func (o *jsonObject) has(k string) bool {
	if o == nil {
		return false
	}
	_, ok := o.vals[k]
	return ok
}

// set replaces the value of k, or appends k when it is new.
func (o *jsonObject) set(k string, v any) *jsonObject {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
	return o
}

func (o *jsonObject) del(k string) {
	if _, ok := o.vals[k]; !ok {
		return
	}
	delete(o.vals, k)
	for i, key := range o.keys {
		if key == k {
			o.keys = append(o.keys[:i:i], o.keys[i+1:]...)
			return
		}
	}
}

func (o *jsonObject) str(k string) string {
	s, _ := o.get(k).(string)
	return s
}

func (o *jsonObject) obj(k string) *jsonObject {
	v, _ := o.get(k).(*jsonObject)
	return v
}

func (o *jsonObject) arr(k string) []any {
	v, _ := o.get(k).([]any)
	return v
}

func (o *jsonObject) num(k string) int {
	switch v := o.get(k).(type) {
	case json.Number:
		n, _ := strconv.Atoi(v.String())
		return n
	case int:
		return v
	}
	return 0
}

// clone copies the object deeply.
func (o *jsonObject) clone() *jsonObject {
	if o == nil {
		return nil
	}
	return cloneJSON(o).(*jsonObject)
}

func cloneJSON(v any) any {
	switch t := v.(type) {
	case *jsonObject:
		c := &jsonObject{keys: append([]string(nil), t.keys...), vals: make(map[string]any, len(t.vals))}
		for k, x := range t.vals {
			c.vals[k] = cloneJSON(x)
		}
		return c
	case []any:
		c := make([]any, len(t))
		for i, x := range t {
			c[i] = cloneJSON(x)
		}
		return c
	}
	return v
}

// MarshalJSON lets encoding/json write objects that reach it (fault contexts).
func (o *jsonObject) MarshalJSON() ([]byte, error) { return encodeJSON(o), nil }

// parseJSON reads one JSON value, objects in key order and numbers as json.Number.
func parseJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := readJSON(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid JSON: data after the value")
	}
	return v, nil
}

// parseObject reads a JSON object.
func parseObject(data []byte) (*jsonObject, error) {
	v, err := parseJSON(data)
	if err != nil {
		return nil, err
	}
	o, ok := v.(*jsonObject)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	return o, nil
}

func readJSON(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, errors.New("invalid JSON: empty")
		}
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	switch d {
	case '{':
		o := obj()
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, fmt.Errorf("invalid JSON: %w", err)
			}
			v, err := readJSON(dec)
			if err != nil {
				return nil, err
			}
			o.set(kt.(string), v)
		}
		_, err = dec.Token()
		return o, err
	case '[':
		a := []any{}
		for dec.More() {
			v, err := readJSON(dec)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err = dec.Token()
		return a, err
	}
	return nil, fmt.Errorf("invalid JSON: unexpected %v", d)
}

// encodeJSON writes v compactly, objects in key order and without escaping <, > and &
// (the model APIs do not, and an HTML page in a message should read as one).
func encodeJSON(v any) []byte {
	var b bytes.Buffer
	writeJSON(&b, v)
	return b.Bytes()
}

func writeJSON(b *bytes.Buffer, v any) {
	switch t := v.(type) {
	case *jsonObject:
		if t == nil {
			b.WriteString("null")
			return
		}
		b.WriteByte('{')
		for i, k := range t.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, k)
			b.WriteByte(':')
			writeJSON(b, t.vals[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, x := range t {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, x)
		}
		b.WriteByte(']')
	case json.Number:
		b.WriteString(t.String())
	default:
		enc := json.NewEncoder(b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(t); err != nil {
			b.WriteString("null")
			return
		}
		b.Truncate(b.Len() - 1) // the encoder's newline
	}
}

// argsValue is the JSON text of tool arguments as a value (Anthropic's input).
func argsValue(args string) (any, error) {
	if strings.TrimSpace(args) == "" {
		return obj(), nil
	}
	v, err := parseJSON([]byte(args))
	if err != nil {
		return nil, fmt.Errorf("tool arguments %.60q: %w", args, err)
	}
	return v, nil
}

// objects returns the elements of a that are objects.
func objects(a []any) []*jsonObject {
	var out []*jsonObject
	for _, v := range a {
		if o, ok := v.(*jsonObject); ok {
			out = append(out, o)
		}
	}
	return out
}

// findCall returns the tool call with id, or nil.
func findCall(m faults.ModelMessage, id string) *faults.ToolCall {
	for i := range m.ToolCalls {
		if m.ToolCalls[i].ID == id {
			return &m.ToolCalls[i]
		}
	}
	return nil
}

// --- OpenAI Chat Completions ------------------------------------------------------

// chatAPI is POST /v1/chat/completions: choices[0].message with content and
// tool_calls, finish_reason in the normalized vocabulary already.
type chatAPI struct{}

func (chatAPI) Name() string { return "openai-chat" }

func (chatAPI) decode(resp *jsonObject) (faults.ModelMessage, error) {
	if e := resp.obj("error"); e != nil {
		return faults.ModelMessage{}, fmt.Errorf("the response is an error: %s", e.str("message"))
	}
	choices := objects(resp.arr("choices"))
	if len(choices) == 0 {
		return faults.ModelMessage{}, errors.New("the response has no choices")
	}
	msg := choices[0].obj("message")
	if msg == nil {
		return faults.ModelMessage{}, errors.New("the first choice has no message")
	}
	var m faults.ModelMessage
	switch c := msg.get("content").(type) {
	case string:
		m.Text = c
	case []any:
		for _, p := range objects(c) {
			m.Text += p.str("text")
		}
	}
	for _, tc := range objects(msg.arr("tool_calls")) {
		fn := tc.obj("function")
		m.ToolCalls = append(m.ToolCalls, faults.ToolCall{ID: tc.str("id"), Name: fn.str("name"), Arguments: fn.str("arguments")})
	}
	m.FinishReason = choices[0].str("finish_reason")
	switch m.FinishReason {
	case "function_call":
		m.FinishReason = faults.FinishToolCalls
	case "":
		m.FinishReason = faults.FinishStop
		if len(m.ToolCalls) > 0 {
			m.FinishReason = faults.FinishToolCalls
		}
	}
	return m, nil
}

func (chatAPI) encode(resp *jsonObject, m faults.ModelMessage) error {
	choices := objects(resp.arr("choices"))
	if len(choices) == 0 {
		c := obj("index", 0, "message", obj("role", "assistant"), "logprobs", nil, "finish_reason", nil)
		resp.set("choices", []any{c})
		choices = []*jsonObject{c}
	}
	c := choices[0]
	msg := c.obj("message")
	if msg == nil {
		msg = obj("role", "assistant")
		c.set("message", msg)
	}
	if m.Text == "" && len(m.ToolCalls) > 0 {
		msg.set("content", nil)
	} else {
		msg.set("content", m.Text)
	}
	old := objects(msg.arr("tool_calls"))
	var calls []any
	for _, tc := range m.ToolCalls {
		var o *jsonObject
		for _, x := range old {
			if x.str("id") == tc.ID {
				o = x
				break
			}
		}
		if o == nil {
			o = obj("id", tc.ID, "type", "function", "function", obj())
		}
		fn := o.obj("function")
		if fn == nil {
			fn = obj()
			o.set("function", fn)
		}
		fn.set("name", tc.Name)
		fn.set("arguments", tc.Arguments)
		calls = append(calls, o)
	}
	if len(calls) == 0 {
		msg.del("tool_calls")
	} else {
		msg.set("tool_calls", calls)
	}
	c.set("finish_reason", m.FinishReason)
	return nil
}

func (chatAPI) readRequest(req *jsonObject) modelRequest {
	r := modelRequest{Model: req.str("model"), Stream: req.get("stream") == true}
	r.IncludeUsage = req.obj("stream_options").get("include_usage") == true
	for _, msg := range objects(req.arr("messages")) {
		role := msg.str("role")
		r.see(role == "tool" || role == "function")
		if role == "assistant" {
			for _, tc := range objects(msg.arr("tool_calls")) {
				fn := tc.obj("function")
				r.Calls = append(r.Calls, faults.ToolCall{ID: tc.str("id"), Name: fn.str("name"), Arguments: fn.str("arguments")})
			}
		}
	}
	return r
}

func (chatAPI) skeleton(turn int, model string, in, out int) *jsonObject {
	return obj(
		"id", fmt.Sprintf("chatcmpl-standin-%d", turn),
		"object", "chat.completion",
		"created", standinCreated,
		"model", model,
		"choices", []any{obj(
			"index", 0,
			"message", obj("role", "assistant", "content", nil, "refusal", nil),
			"logprobs", nil,
			"finish_reason", nil,
		)},
		"usage", obj("prompt_tokens", in, "completion_tokens", out, "total_tokens", in+out),
	)
}

func (chatAPI) callID(turn int) string { return fmt.Sprintf("call_standin_%d", turn) }

// --- OpenAI Responses -------------------------------------------------------------

// responsesAPI is POST /v1/responses: output items of type message (output_text
// parts) and function_call; a cut or filtered answer is status incomplete with
// incomplete_details.reason max_output_tokens or content_filter.
type responsesAPI struct{}

func (responsesAPI) Name() string { return "openai-responses" }

func (responsesAPI) decode(resp *jsonObject) (faults.ModelMessage, error) {
	if e := resp.obj("error"); e != nil {
		return faults.ModelMessage{}, fmt.Errorf("the response is an error: %s", e.str("message"))
	}
	if resp.str("status") == "failed" {
		return faults.ModelMessage{}, errors.New("the response failed")
	}
	if !resp.has("output") {
		return faults.ModelMessage{}, errors.New("the response has no output")
	}
	var m faults.ModelMessage
	for _, item := range objects(resp.arr("output")) {
		switch item.str("type") {
		case "message":
			for _, p := range objects(item.arr("content")) {
				if p.str("type") == "output_text" {
					m.Text += p.str("text")
				}
			}
		case "function_call":
			m.ToolCalls = append(m.ToolCalls, faults.ToolCall{ID: item.str("call_id"), Name: item.str("name"), Arguments: item.str("arguments")})
		}
	}
	switch {
	case resp.str("status") == "incomplete" && resp.obj("incomplete_details").str("reason") == "content_filter":
		m.FinishReason = faults.FinishContentFilter
	case resp.str("status") == "incomplete":
		m.FinishReason = faults.FinishLength
	case len(m.ToolCalls) > 0:
		m.FinishReason = faults.FinishToolCalls
	default:
		m.FinishReason = faults.FinishStop
	}
	return m, nil
}

func (responsesAPI) encode(resp *jsonObject, m faults.ModelMessage) error {
	// The text goes into the first message item (a new one when there is none); the
	// tool calls are the function_call items with their call_id, in the original
	// order; other items (reasoning) stay where they are.
	wantText := m.Text != "" || len(m.ToolCalls) == 0
	itemStatus := "completed"
	if m.FinishReason == faults.FinishLength || m.FinishReason == faults.FinishContentFilter {
		itemStatus = "incomplete"
	}
	textItem := func(old *jsonObject) *jsonObject {
		part := obj("type", "output_text", "annotations", []any{}, "text", "")
		if old != nil {
			for _, p := range objects(old.arr("content")) {
				if p.str("type") == "output_text" {
					part = p
					break
				}
			}
		} else {
			id := "msg_" + strings.TrimPrefix(resp.str("id"), "resp_")
			old = obj("type", "message", "id", id, "status", itemStatus, "role", "assistant", "content", nil)
		}
		part.set("text", m.Text)
		old.set("content", []any{part})
		if old.has("status") {
			old.set("status", itemStatus)
		}
		return old
	}
	var out []any
	placed := false
	used := map[string]bool{}
	for _, item := range objects(resp.arr("output")) {
		switch item.str("type") {
		case "message":
			if wantText && !placed {
				out = append(out, textItem(item))
				placed = true
			}
		case "function_call":
			tc := findCall(m, item.str("call_id"))
			if tc == nil {
				continue
			}
			if !placed && wantText {
				out = append(out, textItem(nil))
				placed = true
			}
			item.set("name", tc.Name)
			item.set("arguments", tc.Arguments)
			used[tc.ID] = true
			out = append(out, item)
		default:
			out = append(out, item)
		}
	}
	if wantText && !placed {
		out = append(out, textItem(nil))
	}
	for _, tc := range m.ToolCalls {
		if !used[tc.ID] {
			out = append(out, obj("type", "function_call", "id", "fc_"+strings.TrimPrefix(tc.ID, "call_"),
				"call_id", tc.ID, "name", tc.Name, "arguments", tc.Arguments, "status", "completed"))
		}
	}
	if out == nil {
		out = []any{}
	}
	resp.set("output", out)
	switch m.FinishReason {
	case faults.FinishLength:
		resp.set("status", "incomplete")
		resp.set("incomplete_details", obj("reason", "max_output_tokens"))
	case faults.FinishContentFilter:
		resp.set("status", "incomplete")
		resp.set("incomplete_details", obj("reason", "content_filter"))
	default:
		resp.set("status", "completed")
		if resp.has("incomplete_details") {
			resp.set("incomplete_details", nil)
		}
	}
	return nil
}

func (responsesAPI) readRequest(req *jsonObject) modelRequest {
	r := modelRequest{Model: req.str("model"), Stream: req.get("stream") == true, PreviousResponse: req.str("previous_response_id")}
	for _, item := range objects(req.arr("input")) {
		typ := item.str("type")
		r.see(strings.HasSuffix(typ, "_call_output"))
		if typ == "function_call" {
			r.Calls = append(r.Calls, faults.ToolCall{ID: item.str("call_id"), Name: item.str("name"), Arguments: item.str("arguments")})
		}
	}
	return r
}

func (responsesAPI) skeleton(turn int, model string, in, out int) *jsonObject {
	return obj(
		"id", fmt.Sprintf("resp_standin_%d", turn),
		"object", "response",
		"created_at", standinCreated,
		"status", "completed",
		"error", nil,
		"incomplete_details", nil,
		"model", model,
		"output", []any{},
		"parallel_tool_calls", true,
		"usage", obj(
			"input_tokens", in, "input_tokens_details", obj("cached_tokens", 0),
			"output_tokens", out, "output_tokens_details", obj("reasoning_tokens", 0),
			"total_tokens", in+out,
		),
	)
}

func (responsesAPI) callID(turn int) string { return fmt.Sprintf("call_standin_%d", turn) }

// --- Anthropic Messages -----------------------------------------------------------

// messagesAPI is POST /v1/messages: content blocks text and tool_use{id,name,input};
// stop_reason end_turn, max_tokens, tool_use or refusal.
type messagesAPI struct{}

func (messagesAPI) Name() string { return "anthropic-messages" }

func (messagesAPI) decode(resp *jsonObject) (faults.ModelMessage, error) {
	if resp.str("type") == "error" {
		return faults.ModelMessage{}, fmt.Errorf("the response is an error: %s", resp.obj("error").str("message"))
	}
	if !resp.has("content") {
		return faults.ModelMessage{}, errors.New("the response has no content")
	}
	var m faults.ModelMessage
	for _, b := range objects(resp.arr("content")) {
		switch b.str("type") {
		case "text":
			m.Text += b.str("text")
		case "tool_use":
			input := b.get("input")
			if input == nil {
				input = obj()
			}
			m.ToolCalls = append(m.ToolCalls, faults.ToolCall{ID: b.str("id"), Name: b.str("name"), Arguments: string(encodeJSON(input))})
		}
	}
	switch resp.str("stop_reason") {
	case "max_tokens", "model_context_window_exceeded":
		m.FinishReason = faults.FinishLength
	case "tool_use":
		m.FinishReason = faults.FinishToolCalls
	case "refusal":
		m.FinishReason = faults.FinishContentFilter
	case "":
		m.FinishReason = faults.FinishStop
		if len(m.ToolCalls) > 0 {
			m.FinishReason = faults.FinishToolCalls
		}
	default: // end_turn, stop_sequence, pause_turn
		m.FinishReason = faults.FinishStop
	}
	return m, nil
}

func (messagesAPI) encode(resp *jsonObject, m faults.ModelMessage) error {
	var out []any
	placed := false
	used := map[string]bool{}
	for _, b := range objects(resp.arr("content")) {
		switch b.str("type") {
		case "text":
			if m.Text != "" && !placed {
				b.set("text", m.Text)
				out = append(out, b)
				placed = true
			}
		case "tool_use":
			tc := findCall(m, b.str("id"))
			if tc == nil {
				continue
			}
			if m.Text != "" && !placed {
				out = append(out, obj("type", "text", "text", m.Text))
				placed = true
			}
			input, err := argsValue(tc.Arguments)
			if err != nil {
				return err
			}
			b.set("name", tc.Name)
			b.set("input", input)
			used[tc.ID] = true
			out = append(out, b)
		default:
			out = append(out, b)
		}
	}
	if m.Text != "" && !placed {
		out = append(out, obj("type", "text", "text", m.Text))
	}
	for _, tc := range m.ToolCalls {
		if used[tc.ID] {
			continue
		}
		input, err := argsValue(tc.Arguments)
		if err != nil {
			return err
		}
		out = append(out, obj("type", "tool_use", "id", tc.ID, "name", tc.Name, "input", input))
	}
	if out == nil {
		out = []any{}
	}
	resp.set("content", out)
	reason := "end_turn"
	switch m.FinishReason {
	case faults.FinishLength:
		reason = "max_tokens"
	case faults.FinishToolCalls:
		reason = "tool_use"
	case faults.FinishContentFilter:
		reason = "refusal"
	default:
		if old := resp.str("stop_reason"); old == "stop_sequence" || old == "pause_turn" {
			reason = old
		}
	}
	if reason != resp.str("stop_reason") && resp.has("stop_sequence") {
		resp.set("stop_sequence", nil)
	}
	resp.set("stop_reason", reason)
	return nil
}

func (messagesAPI) readRequest(req *jsonObject) modelRequest {
	r := modelRequest{Model: req.str("model"), Stream: req.get("stream") == true}
	for _, msg := range objects(req.arr("messages")) {
		result := false
		for _, b := range objects(msg.arr("content")) {
			switch b.str("type") {
			case "tool_result":
				result = msg.str("role") == "user"
			case "tool_use":
				input := b.get("input")
				if input == nil {
					input = obj()
				}
				r.Calls = append(r.Calls, faults.ToolCall{ID: b.str("id"), Name: b.str("name"), Arguments: string(encodeJSON(input))})
			}
		}
		r.see(result)
	}
	return r
}

func (messagesAPI) skeleton(turn int, model string, in, out int) *jsonObject {
	return obj(
		"id", fmt.Sprintf("msg_standin_%d", turn),
		"type", "message",
		"role", "assistant",
		"model", model,
		"content", []any{},
		"stop_reason", nil,
		"stop_sequence", nil,
		"usage", obj("input_tokens", in, "output_tokens", out),
	)
}

func (messagesAPI) callID(turn int) string { return fmt.Sprintf("toolu_standin_%d", turn) }
