package llm

// What each model call used: the tokens its response declares, read from the whole
// response (a streamed one assembled first) on the three APIs, and their money by the
// proxy's price table.
//
//	OpenAI Chat       usage.prompt_tokens (cached: prompt_tokens_details.cached_tokens), completion_tokens
//	OpenAI Responses  usage.input_tokens (cached: input_tokens_details.cached_tokens), output_tokens
//	Anthropic         usage.input_tokens, output_tokens, cache_read_input_tokens, cache_creation_input_tokens

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/crashwall/chaos/cost"
	"github.com/crashwall/chaos/record"
)

// readUsage reads the tokens a whole response declares; ok is false when it declares none.
func readUsage(api modelAPI, full *jsonObject) (model string, t cost.Tokens, ok bool) {
	u := full.obj("usage")
	if u == nil {
		return full.str("model"), t, false
	}
	model = full.str("model")
	switch api.(type) {
	case chatAPI:
		in := tokenCount(u.get("prompt_tokens"))
		cached := tokenCount(u.obj("prompt_tokens_details").get("cached_tokens"))
		t = cost.Tokens{Input: in - cached, CacheRead: cached, Output: tokenCount(u.get("completion_tokens"))}
		ok = u.has("prompt_tokens") || u.has("completion_tokens")
	case responsesAPI:
		in := tokenCount(u.get("input_tokens"))
		cached := tokenCount(u.obj("input_tokens_details").get("cached_tokens"))
		t = cost.Tokens{Input: in - cached, CacheRead: cached, Output: tokenCount(u.get("output_tokens"))}
		ok = u.has("input_tokens") || u.has("output_tokens")
	case messagesAPI:
		t = cost.Tokens{
			Input: tokenCount(u.get("input_tokens")), Output: tokenCount(u.get("output_tokens")),
			CacheRead: tokenCount(u.get("cache_read_input_tokens")), CacheWrite: tokenCount(u.get("cache_creation_input_tokens")),
		}
		ok = u.has("input_tokens") || u.has("output_tokens")
	}
	if t.Input < 0 {
		t.Input = 0
	}
	return model, t, ok
}

// tokenCount reads a token count: a JSON number (json.Number, or a Go number set by code).
func tokenCount(v any) int64 {
	switch n := v.(type) {
	case json.Number:
		i, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil {
			f, ferr := n.Float64()
			if ferr != nil {
				return 0
			}
			return int64(f)
		}
		return i
	case int:
		return int64(n)
	case int64:
		return n
	case float64:
		return int64(n)
	}
	return 0
}

// spend counts a model call's usage in the proxy's sums and returns it for the record's
// row (nil when the response declared none, which is counted as unread).
func (p *ModelProxy) spend(api modelAPI, full *jsonObject) *record.Usage {
	model, t, ok := readUsage(api, full)
	p.mu.Lock()
	defer p.mu.Unlock()
	if !ok {
		p.usage.Unread++
		return nil
	}
	usd, priced := p.usage.AddCall(p.prices, model, t)
	row := &record.Usage{Model: model, Input: t.Input, Output: t.Output, CacheRead: t.CacheRead, CacheWrite: t.CacheWrite}
	if priced {
		row.USD = &usd
	}
	return row
}

// spendResponse is spend for a response the proxy streamed through: data is its body as
// kept. A response that is not a 2xx model message declares no usage and is not counted.
func (p *ModelProxy) spendResponse(api modelAPI, resp *http.Response, data []byte) *record.Usage {
	if resp.StatusCode/100 != 2 {
		return nil
	}
	full, err := decodeBody(api, data, isEventStream(resp.Header))
	if err != nil {
		return nil
	}
	return p.spend(api, full)
}

// declareUsage writes t as the usage of a whole response, in the API's own words (the
// stand-in's scripted usage).
func declareUsage(api modelAPI, full *jsonObject, t cost.Tokens) {
	switch api.(type) {
	case chatAPI:
		in := t.Input + t.CacheRead
		full.set("usage", obj("prompt_tokens", in, "completion_tokens", t.Output, "total_tokens", in+t.Output,
			"prompt_tokens_details", obj("cached_tokens", t.CacheRead)))
	case responsesAPI:
		in := t.Input + t.CacheRead
		full.set("usage", obj("input_tokens", in, "input_tokens_details", obj("cached_tokens", t.CacheRead),
			"output_tokens", t.Output, "output_tokens_details", obj("reasoning_tokens", 0), "total_tokens", in+t.Output))
	case messagesAPI:
		full.set("usage", obj("input_tokens", t.Input, "cache_creation_input_tokens", t.CacheWrite,
			"cache_read_input_tokens", t.CacheRead, "output_tokens", t.Output))
	}
}

// Usage returns the tokens and money of the model calls so far.
func (p *ModelProxy) Usage() cost.Usage {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.usage
}
