package llm

import (
	"bytes"
	"fmt"
	"math"
	"testing"

	"github.com/crashwall/chaos/cost"
	"github.com/crashwall/chaos/record"
)

// usageScript is the support-ticket script with a declared usage on every step.
func usageScript(tb testing.TB) (Script, []cost.Tokens) {
	s := llmScript(tb, "")
	declared := []cost.Tokens{
		{Input: 1200, Output: 31, CacheRead: 400, CacheWrite: 800},
		{Input: 1500, Output: 45, CacheRead: 2000},
		{Input: 90, Output: 52, CacheRead: 2500, CacheWrite: 17},
		{Input: 1900, Output: 120},
	}
	for i := range s {
		d := declared[i]
		s[i].Usage = &d
	}
	return s, declared
}

// TestModelUsage: the tokens and money the proxy sums over a conversation are exactly
// what the stand-in declared, on the three APIs, streamed and not, with a fault that
// fires on one call and without; the record's rows hold each call's part.
func TestModelUsage(t *testing.T) {
	prices := cost.Table{
		"gpt-test":    {Input: 2, Output: 8, CacheRead: 0.5},
		"claude-test": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
	}
	for _, a := range llmAPIs {
		for _, stream := range []bool{false, true} {
			for _, fault := range []string{"none", "tool_schema_single"} {
				t.Run(fmt.Sprintf("%s/stream=%v/%s", a.api.Name(), stream, fault), func(t *testing.T) {
					script, declared := usageScript(t)
					rec, path := llmRecord(t)
					url, p := llmProxy(t, ModelProxyConfig{Upstream: llmStandin(t, script), Fault: fault, Steps: []string{"call-2"}, Record: rec, Prices: prices})
					for k := range 4 {
						llmPost(t, url+a.path, llmRequest(a.api, k, stream), nil)
					}
					rec.Close(record.Row{})

					var want cost.Tokens
					var usd float64
					for _, d := range declared {
						want.Add(d)
					}
					// OpenAI has no price for cache writes: they are part of its prompt
					// tokens, which the stand-in declares as fresh input plus cached reads.
					model := "claude-test"
					if _, ok := a.api.(messagesAPI); !ok {
						model = "gpt-test"
						want.CacheWrite = 0
						for _, d := range declared {
							usd += (float64(d.Input)*2 + float64(d.Output)*8 + float64(d.CacheRead)*0.5) / 1e6
						}
					} else {
						for _, d := range declared {
							usd += (float64(d.Input)*3 + float64(d.Output)*15 + float64(d.CacheRead)*0.3 + float64(d.CacheWrite)*3.75) / 1e6
						}
					}
					got := p.Usage()
					if got.Tokens != want || got.Calls != 4 || got.Unread != 0 || len(got.Unpriced) != 0 {
						t.Errorf("usage %+v, want tokens %+v over 4 calls", got, want)
					}
					if math.Abs(got.USD-usd) > 1e-6 {
						t.Errorf("money %v, want %v", got.USD, usd)
					}
					if st := p.Stats(); fault != "none" && st.Fired != 1 {
						t.Errorf("the fault fired %d times, want once", st.Fired)
					}
					log, err := record.ReadFile(path)
					if err != nil {
						t.Fatal(err)
					}
					var rows cost.Tokens
					var rowUSD float64
					n := 0
					for _, r := range log.Calls() {
						if r.Usage == nil {
							t.Errorf("row %d has no usage", r.Seq)
							continue
						}
						if r.Usage.Model != model || r.Usage.USD == nil {
							t.Errorf("row %d: model %q, usd %v", r.Seq, r.Usage.Model, r.Usage.USD)
							continue
						}
						n++
						rows.Add(cost.Tokens{Input: r.Usage.Input, Output: r.Usage.Output, CacheRead: r.Usage.CacheRead, CacheWrite: r.Usage.CacheWrite})
						rowUSD += *r.Usage.USD
					}
					if n != 4 || rows != want || math.Abs(rowUSD-usd) > 1e-5 {
						t.Errorf("the record's rows: %d with usage, tokens %+v, $%v; want 4, %+v, $%v", n, rows, rowUSD, want, usd)
					}
				})
			}
		}
	}
}

// TestModelUsageUnknown: a stream that declares no usage (OpenAI Chat without
// stream_options.include_usage) is counted as unread, never as zero tokens; a model with
// no price is named, its tokens counted and its money left out.
func TestModelUsageUnknown(t *testing.T) {
	script, _ := usageScript(t)
	url, p := llmProxy(t, ModelProxyConfig{Upstream: llmStandin(t, script), Prices: cost.Table{}})
	body := encodeJSON(obj("model", "gpt-test", "stream", true, "messages", []any{obj("role", "user", "content", llmTask)}))
	llmPost(t, url+"/v1/chat/completions", body, nil)
	llmPost(t, url+"/v1/messages", llmRequest(messagesAPI{}, 0, false), nil)
	u := p.Usage()
	if u.Unread != 1 || u.Calls != 1 || u.Input != 1200 || u.USD != 0 || len(u.Unpriced) != 1 || u.Unpriced[0] != "claude-test" || u.Complete() {
		t.Errorf("usage %+v", u)
	}
}

// TestModelMaxUSD: once the trial's model calls cost more than limits.max_cost_usd, the
// proxy forwards no further call: the next is answered 402 (which no client retries) and
// recorded as rejected, so the trial overshoots by at most the call that crossed the limit.
func TestModelMaxUSD(t *testing.T) {
	prices := cost.Table{"claude-test": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}}
	a := llmAPIs[0]
	for _, x := range llmAPIs {
		if _, ok := x.api.(messagesAPI); ok {
			a = x
		}
	}
	script, declared := usageScript(t)
	first := (float64(declared[0].Input)*3 + float64(declared[0].Output)*15 + float64(declared[0].CacheRead)*0.3 + float64(declared[0].CacheWrite)*3.75) / 1e6
	rec, path := llmRecord(t)
	// The limit sits below the first call's cost: that call crosses it and is answered;
	// every call after it is refused.
	url, p := llmProxy(t, ModelProxyConfig{Upstream: llmStandin(t, script), Record: rec, Prices: prices, MaxUSD: first / 2})
	if resp, _ := llmPost(t, url+a.path, llmRequest(a.api, 0, false), nil); resp.StatusCode != 200 {
		t.Fatalf("the first call: %d, want it answered", resp.StatusCode)
	}
	for k := 1; k < 3; k++ {
		resp, body := llmPost(t, url+a.path, llmRequest(a.api, k, false), nil)
		if resp.StatusCode != 402 || !bytes.Contains(body, []byte("limits.max_cost_usd")) {
			t.Errorf("call %d after the limit: %d %s, want 402 naming limits.max_cost_usd", k+1, resp.StatusCode, body)
		}
	}
	rec.Close(record.Row{})
	if u := p.Usage(); u.Calls != 1 || math.Abs(u.USD-first) > 1e-6 {
		t.Errorf("usage %+v, want the one call that crossed the limit ($%v)", u, first)
	}
	log, err := record.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rejected := 0
	for _, r := range log.Rows {
		if r.Type == record.TypeRejected && r.Transport == TransportLLM {
			rejected++
		}
	}
	if rejected != 2 {
		t.Errorf("%d rejected model rows in the record, want 2", rejected)
	}
}
