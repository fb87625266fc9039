package spec

import (
	"math"

	"gopkg.in/yaml.v3"

	"github.com/crashwall/chaos/cost"
)

// money reads an amount of US dollars: a number, 0 or more (0: no limit).
func (d *decoder) money(n *yaml.Node, what string) float64 {
	n = deref(n)
	if isNull(n) {
		return 0
	}
	var v float64
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") || n.Decode(&v) != nil {
		d.errorf(n, "%s must be an amount of US dollars (a number such as 0.50), got %s", what, got(n))
		return 0
	}
	if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		d.errorf(n, "%s must be 0 or more, got %s", what, n.Value)
		return 0
	}
	return v
}

var priceKeys = []string{"input", "output", "cache_read", "cache_write"}

// prices reads model.prices: per model name, USD per million tokens.
//
//	prices:
//	  claude-sonnet-4-5: {input: 3, output: 15, cache_read: 0.3, cache_write: 3.75}
func (d *decoder) prices(n *yaml.Node) cost.Table {
	n = deref(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "model.prices must be a mapping of model names to prices ({input: 3, output: 15}, USD per million tokens), got %s", got(n))
		return nil
	}
	t := cost.Table{}
	for _, p := range d.pairs(n) {
		what := "model.prices." + p.key.Value
		f := d.fields(p.val, what, priceKeys, map[string]string{"in": "input", "out": "output", "prompt": "input", "completion": "output"})
		if f["input"] == nil || f["output"] == nil {
			d.errorf(p.val, "%s needs input and output (USD per million tokens)", what)
		}
		t[p.key.Value] = cost.Price{
			Input: d.money(f["input"], what+".input"), Output: d.money(f["output"], what+".output"),
			CacheRead: d.money(f["cache_read"], what+".cache_read"), CacheWrite: d.money(f["cache_write"], what+".cache_write"),
		}
	}
	return t
}

// PriceTable is the table the model proxy prices calls by: the defaults (docs/model.md)
// with the spec's model.prices in their place.
func (m ModelSpec) PriceTable() cost.Table { return cost.Defaults.With(m.Prices) }
