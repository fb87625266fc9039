package llm

// Streamed (SSE) model responses. A faulted stream is read whole, assembled into the
// response the API would have sent unstreamed, mutated there, and streamed again with
// the API's own events:
//
//	OpenAI Chat       data: {chunk with choices[].delta} ... data: [DONE]
//	OpenAI Responses  response.created, response.in_progress, per item: output_item.added,
//	                  (content_part.added, output_text.delta..., output_text.done, content_part.done)
//	                  or function_call_arguments.delta..., .done, then output_item.done;
//	                  response.completed or response.incomplete
//	Anthropic         message_start, per block: content_block_start, content_block_delta
//	                  (text_delta or input_json_delta)..., content_block_stop; message_delta, message_stop

import (
	"bytes"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"sort"
	"strings"
	"unicode/utf8"
)

// sseEvent is one server-sent event.
type sseEvent struct {
	Event string
	Data  string
}

// isEventStream says whether a response is server-sent events.
func isEventStream(h http.Header) bool {
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return mt == "text/event-stream"
}

// parseSSE splits a stream into its events; comments and events without data are
// left out.
func parseSSE(body []byte) []sseEvent {
	text := strings.ReplaceAll(string(body), "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	var out []sseEvent
	for _, block := range strings.Split(text, "\n\n") {
		var ev sseEvent
		var data []string
		for _, line := range strings.Split(block, "\n") {
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "event":
				ev.Event = value
			case "data":
				data = append(data, value)
			}
		}
		if data == nil {
			continue
		}
		ev.Data = strings.Join(data, "\n")
		out = append(out, ev)
	}
	return out
}

func writeSSE(b *bytes.Buffer, event string, data []byte) {
	if event != "" {
		b.WriteString("event: ")
		b.WriteString(event)
		b.WriteByte('\n')
	}
	b.WriteString("data: ")
	b.Write(data)
	b.WriteString("\n\n")
}

// eventObjects parses the data of each event as a JSON object, skipping OpenAI's
// [DONE]; an event of type error ends the stream with its message.
func eventObjects(events []sseEvent) ([]*jsonObject, error) {
	var out []*jsonObject
	for _, ev := range events {
		if strings.TrimSpace(ev.Data) == "[DONE]" {
			continue
		}
		o, err := parseObject([]byte(ev.Data))
		if err != nil {
			return nil, fmt.Errorf("stream event %q: %v", ev.Event, err)
		}
		if ev.Event == "error" || o.str("type") == "error" || o.obj("error") != nil && !o.has("choices") && !o.has("response") {
			msg := o.obj("error").str("message")
			if msg == "" {
				msg = o.str("message")
			}
			return nil, fmt.Errorf("the stream carried an error: %s", msg)
		}
		out = append(out, o)
	}
	if len(out) == 0 {
		return nil, errors.New("the stream has no events")
	}
	return out, nil
}

// pieces splits s into pieces of at most n bytes, on rune boundaries (one piece
// when n <= 0; none when s is empty).
func pieces(s string, n int) []string {
	if s == "" {
		return nil
	}
	if n <= 0 {
		return []string{s}
	}
	var out []string
	for len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		if cut == 0 {
			_, cut = utf8.DecodeRuneInString(s)
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return append(out, s)
}

// --- OpenAI Chat Completions ------------------------------------------------------

func (chatAPI) assemble(events []sseEvent) (*jsonObject, error) {
	chunks, err := eventObjects(events)
	if err != nil {
		return nil, err
	}
	type call struct {
		o    *jsonObject
		args strings.Builder
	}
	type choice struct {
		index            int
		role             string
		content, refusal strings.Builder
		hasContent       bool
		hasRefusal       bool
		calls            map[int]*call
		callOrder        []int
		finish           any
	}
	resp := chunks[0].clone()
	resp.set("object", "chat.completion")
	resp.del("choices")
	resp.del("usage")
	var usage any
	choices := map[int]*choice{}
	var order []int
	for _, ch := range chunks {
		if u := ch.get("usage"); u != nil {
			usage = u
		}
		for _, c := range objects(ch.arr("choices")) {
			i := c.num("index")
			acc := choices[i]
			if acc == nil {
				acc = &choice{index: i, role: "assistant", calls: map[int]*call{}}
				choices[i] = acc
				order = append(order, i)
			}
			if f := c.get("finish_reason"); f != nil {
				acc.finish = f
			}
			d := c.obj("delta")
			if r := d.str("role"); r != "" {
				acc.role = r
			}
			if s, ok := d.get("content").(string); ok {
				acc.content.WriteString(s)
				acc.hasContent = true
			}
			if d.has("refusal") {
				s, _ := d.get("refusal").(string)
				acc.refusal.WriteString(s)
				acc.hasRefusal = true
			}
			for _, tc := range objects(d.arr("tool_calls")) {
				j := tc.num("index")
				cl := acc.calls[j]
				if cl == nil {
					cl = &call{o: obj("id", "", "type", "function", "function", obj("name", "", "arguments", ""))}
					acc.calls[j] = cl
					acc.callOrder = append(acc.callOrder, j)
				}
				if id := tc.str("id"); id != "" {
					cl.o.set("id", id)
				}
				if t := tc.str("type"); t != "" {
					cl.o.set("type", t)
				}
				fn := tc.obj("function")
				if n := fn.str("name"); n != "" {
					cl.o.obj("function").set("name", n)
				}
				cl.args.WriteString(fn.str("arguments"))
			}
		}
	}
	if len(choices) == 0 {
		return nil, errors.New("the stream has no choices")
	}
	sort.Ints(order)
	var out []any
	for _, i := range order {
		acc := choices[i]
		msg := obj("role", acc.role, "content", nil)
		if acc.hasContent {
			msg.set("content", acc.content.String())
		}
		if acc.hasRefusal {
			msg.set("refusal", nil)
			if acc.refusal.Len() > 0 {
				msg.set("refusal", acc.refusal.String())
			}
		}
		var calls []any
		sort.Ints(acc.callOrder)
		for _, j := range acc.callOrder {
			cl := acc.calls[j]
			cl.o.obj("function").set("arguments", cl.args.String())
			calls = append(calls, cl.o)
		}
		if calls != nil {
			msg.set("tool_calls", calls)
		}
		out = append(out, obj("index", acc.index, "message", msg, "logprobs", nil, "finish_reason", acc.finish))
	}
	resp.set("choices", out)
	if usage != nil {
		resp.set("usage", usage)
	}
	return resp, nil
}

func (chatAPI) stream(resp *jsonObject, chunk int) []byte {
	base := resp.clone()
	base.del("choices")
	base.del("usage")
	base.set("object", "chat.completion.chunk")
	var b bytes.Buffer
	emit := func(index int, delta *jsonObject, finish any) {
		c := base.clone()
		c.set("choices", []any{obj("index", index, "delta", delta, "logprobs", nil, "finish_reason", finish)})
		writeSSE(&b, "", encodeJSON(c))
	}
	for _, c := range objects(resp.arr("choices")) {
		i := c.num("index")
		msg := c.obj("message")
		text, _ := msg.get("content").(string)
		calls := objects(msg.arr("tool_calls"))
		role := msg.str("role")
		if role == "" {
			role = "assistant"
		}
		first := obj("role", role, "content", "")
		if text == "" && len(calls) > 0 {
			first.set("content", nil)
		}
		if msg.has("refusal") {
			first.set("refusal", nil)
		}
		emit(i, first, nil)
		for _, p := range pieces(text, chunk) {
			emit(i, obj("content", p), nil)
		}
		if r, _ := msg.get("refusal").(string); r != "" {
			for _, p := range pieces(r, chunk) {
				emit(i, obj("refusal", p), nil)
			}
		}
		for j, tc := range calls {
			fn := tc.obj("function")
			emit(i, obj("tool_calls", []any{obj("index", j, "id", tc.str("id"), "type", "function",
				"function", obj("name", fn.str("name"), "arguments", ""))}), nil)
			for _, p := range pieces(fn.str("arguments"), chunk) {
				emit(i, obj("tool_calls", []any{obj("index", j, "function", obj("arguments", p))}), nil)
			}
		}
		emit(i, obj(), c.get("finish_reason"))
	}
	if u := resp.get("usage"); u != nil {
		c := base.clone()
		c.set("choices", []any{})
		c.set("usage", u)
		writeSSE(&b, "", encodeJSON(c))
	}
	writeSSE(&b, "", []byte("[DONE]"))
	return b.Bytes()
}

// --- OpenAI Responses -------------------------------------------------------------

// The final events of a Responses stream carry the whole response.
var responsesFinal = map[string]bool{"response.completed": true, "response.incomplete": true, "response.failed": true}

func (responsesAPI) assemble(events []sseEvent) (*jsonObject, error) {
	evs, err := eventObjects(events)
	if err != nil {
		return nil, err
	}
	var final *jsonObject
	done := map[int]any{}
	for _, ev := range evs {
		switch t := ev.str("type"); {
		case responsesFinal[t]:
			final = ev.obj("response").clone()
		case t == "response.output_item.done":
			done[ev.num("output_index")] = ev.get("item")
		}
	}
	if final == nil {
		return nil, errors.New("the stream ended without response.completed")
	}
	// Some servers leave the output out of the final event: take it from the items.
	if len(final.arr("output")) == 0 && len(done) > 0 {
		idx := make([]int, 0, len(done))
		for i := range done {
			idx = append(idx, i)
		}
		sort.Ints(idx)
		var out []any
		for _, i := range idx {
			out = append(out, cloneJSON(done[i]))
		}
		final.set("output", out)
	}
	return final, nil
}

func (responsesAPI) stream(resp *jsonObject, chunk int) []byte {
	var b bytes.Buffer
	seq := 0
	emit := func(typ string, kv ...any) {
		ev := obj("type", typ, "sequence_number", seq)
		for i := 0; i+1 < len(kv); i += 2 {
			ev.set(kv[i].(string), kv[i+1])
		}
		seq++
		writeSSE(&b, typ, encodeJSON(ev))
	}
	start := resp.clone()
	start.set("status", "in_progress")
	start.set("output", []any{})
	if start.has("incomplete_details") {
		start.set("incomplete_details", nil)
	}
	if start.has("usage") {
		start.set("usage", nil)
	}
	emit("response.created", "response", start)
	emit("response.in_progress", "response", start.clone())
	for i, item := range objects(resp.arr("output")) {
		id := item.str("id")
		added := item.clone()
		switch item.str("type") {
		case "message":
			if added.has("status") {
				added.set("status", "in_progress")
			}
			added.set("content", []any{})
			emit("response.output_item.added", "output_index", i, "item", added)
			for j, part := range objects(item.arr("content")) {
				text := part.str("text")
				empty := part.clone()
				if part.str("type") == "output_text" {
					empty.set("text", "")
				}
				emit("response.content_part.added", "item_id", id, "output_index", i, "content_index", j, "part", empty)
				if part.str("type") == "output_text" {
					for _, p := range pieces(text, chunk) {
						emit("response.output_text.delta", "item_id", id, "output_index", i, "content_index", j, "delta", p, "logprobs", []any{})
					}
					emit("response.output_text.done", "item_id", id, "output_index", i, "content_index", j, "text", text, "logprobs", []any{})
				}
				emit("response.content_part.done", "item_id", id, "output_index", i, "content_index", j, "part", part)
			}
		case "function_call":
			if added.has("status") {
				added.set("status", "in_progress")
			}
			added.set("arguments", "")
			emit("response.output_item.added", "output_index", i, "item", added)
			args := item.str("arguments")
			for _, p := range pieces(args, chunk) {
				emit("response.function_call_arguments.delta", "item_id", id, "output_index", i, "delta", p)
			}
			emit("response.function_call_arguments.done", "item_id", id, "output_index", i, "arguments", args)
		default:
			emit("response.output_item.added", "output_index", i, "item", added)
		}
		emit("response.output_item.done", "output_index", i, "item", item)
	}
	final := "response.completed"
	switch resp.str("status") {
	case "incomplete":
		final = "response.incomplete"
	case "failed":
		final = "response.failed"
	}
	emit(final, "response", resp)
	return b.Bytes()
}

// --- Anthropic Messages -----------------------------------------------------------

func (messagesAPI) assemble(events []sseEvent) (*jsonObject, error) {
	evs, err := eventObjects(events)
	if err != nil {
		return nil, err
	}
	var msg *jsonObject
	type block struct {
		o    *jsonObject
		json strings.Builder
	}
	blocks := map[int]*block{}
	var order []int
	for _, ev := range evs {
		switch ev.str("type") {
		case "message_start":
			msg = ev.obj("message").clone()
		case "content_block_start":
			i := ev.num("index")
			if blocks[i] == nil {
				order = append(order, i)
			}
			blocks[i] = &block{o: ev.obj("content_block").clone()}
		case "content_block_delta":
			bl := blocks[ev.num("index")]
			if bl == nil {
				return nil, fmt.Errorf("a content_block_delta for block %d, which did not start", ev.num("index"))
			}
			d := ev.obj("delta")
			switch d.str("type") {
			case "text_delta":
				bl.o.set("text", bl.o.str("text")+d.str("text"))
			case "input_json_delta":
				bl.json.WriteString(d.str("partial_json"))
			case "thinking_delta":
				bl.o.set("thinking", bl.o.str("thinking")+d.str("thinking"))
			case "signature_delta":
				bl.o.set("signature", d.str("signature"))
			case "citations_delta":
				bl.o.set("citations", append(bl.o.arr("citations"), d.get("citation")))
			}
		case "message_delta":
			if msg == nil {
				return nil, errors.New("a message_delta before message_start")
			}
			d := ev.obj("delta")
			for _, k := range d.keys {
				msg.set(k, d.get(k))
			}
			if u := ev.obj("usage"); u != nil {
				mu := msg.obj("usage")
				if mu == nil {
					mu = obj()
					msg.set("usage", mu)
				}
				for _, k := range u.keys {
					if u.get(k) != nil {
						mu.set(k, u.get(k))
					}
				}
			}
		}
	}
	if msg == nil {
		return nil, errors.New("the stream has no message_start")
	}
	sort.Ints(order)
	content := []any{}
	for _, i := range order {
		bl := blocks[i]
		if bl.json.Len() > 0 || bl.o.str("type") == "tool_use" && bl.o.obj("input") == nil {
			input, err := argsValue(bl.json.String())
			if err != nil {
				return nil, err
			}
			bl.o.set("input", input)
		}
		content = append(content, bl.o)
	}
	msg.set("content", content)
	return msg, nil
}

func (messagesAPI) stream(resp *jsonObject, chunk int) []byte {
	var b bytes.Buffer
	emit := func(typ string, kv ...any) {
		ev := obj("type", typ)
		for i := 0; i+1 < len(kv); i += 2 {
			ev.set(kv[i].(string), kv[i+1])
		}
		writeSSE(&b, typ, encodeJSON(ev))
	}
	start := resp.clone()
	start.set("content", []any{})
	start.set("stop_reason", nil)
	start.set("stop_sequence", nil)
	emit("message_start", "message", start)
	for i, bl := range objects(resp.arr("content")) {
		first := bl.clone()
		switch bl.str("type") {
		case "text":
			first.set("text", "")
			emit("content_block_start", "index", i, "content_block", first)
			for _, p := range pieces(bl.str("text"), chunk) {
				emit("content_block_delta", "index", i, "delta", obj("type", "text_delta", "text", p))
			}
		case "tool_use":
			first.set("input", obj())
			emit("content_block_start", "index", i, "content_block", first)
			input := bl.get("input")
			if input == nil {
				input = obj()
			}
			for _, p := range pieces(string(encodeJSON(input)), chunk) {
				emit("content_block_delta", "index", i, "delta", obj("type", "input_json_delta", "partial_json", p))
			}
		case "thinking":
			first.set("thinking", "")
			first.set("signature", "")
			emit("content_block_start", "index", i, "content_block", first)
			for _, p := range pieces(bl.str("thinking"), chunk) {
				emit("content_block_delta", "index", i, "delta", obj("type", "thinking_delta", "thinking", p))
			}
			emit("content_block_delta", "index", i, "delta", obj("type", "signature_delta", "signature", bl.str("signature")))
		default:
			emit("content_block_start", "index", i, "content_block", first)
		}
		emit("content_block_stop", "index", i)
	}
	usage := obj()
	if u := resp.obj("usage"); u != nil && u.has("output_tokens") {
		usage.set("output_tokens", u.get("output_tokens"))
	}
	emit("message_delta", "delta", obj("stop_reason", resp.get("stop_reason"), "stop_sequence", resp.get("stop_sequence")), "usage", usage)
	emit("message_stop")
	return b.Bytes()
}
