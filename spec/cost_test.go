package spec

import (
	"strings"
	"testing"

	"github.com/crashwall/chaos/cost"
)

func TestCostKeys(t *testing.T) {
	s, err := Parse("spec.yaml", []byte(base+"limits: {max_cost_usd: 0.25}\nmodel:\n  upstream: http://127.0.0.1:9/v1\n  prices:\n    standin: {input: 1.5, output: 6}\n    claude-sonnet-4-5: {input: 2, output: 10, cache_read: 0.2, cache_write: 2.5}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Limits.MaxCostUSD != 0.25 {
		t.Errorf("max_cost_usd %v", s.Limits.MaxCostUSD)
	}
	table := s.Model.PriceTable()
	if p, _ := table.Lookup("standin"); p != (cost.Price{Input: 1.5, Output: 6}) {
		t.Errorf("standin price %+v", p)
	}
	// A price names one model: another whose name begins with it is not priced by it.
	if p, ok := table.Lookup("standin-x"); ok {
		t.Errorf("standin-x priced by standin's row: %+v", p)
	}
	if p, _ := table.Lookup("claude-sonnet-4-5-20250929"); p.Input != 2 || p.CacheWrite != 2.5 {
		t.Errorf("the spec's price does not replace the default: %+v", p)
	}
	if p, _ := table.Lookup("gpt-4o"); p.Input != 2.5 {
		t.Errorf("the defaults are lost: %+v", p)
	}

	for _, tc := range []struct{ yaml, want string }{
		{"limits: {max_cost_usd: -1}\n", "spec.yaml:13: limits.max_cost_usd must be 0 or more, got -1"},
		{"limits: {max_cost_usd: lots}\n", `spec.yaml:13: limits.max_cost_usd must be an amount of US dollars (a number such as 0.50), got "lots"`},
		{"model: {upstream: 'http://127.0.0.1:9', prices: {m: {input: 1}}}\n", "spec.yaml:13: model.prices.m needs input and output (USD per million tokens)"},
		{"model: {upstream: 'http://127.0.0.1:9', prices: {m: {input: 1, output: 2, cached: 1}}}\n", `unknown key "cached" in model.prices.m`},
	} {
		_, err := Parse("spec.yaml", []byte(base+tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.yaml, err, tc.want)
		}
	}
}
