// Package cost turns the tokens a model call used into money: a price table per model
// (USD per million tokens, overridable per spec) and the sums a trial and a run keep.
package cost

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Price is what a model charges, in USD per million tokens.
type Price struct {
	// Input is the price of input tokens read fresh (not from a cache).
	Input float64 `json:"input" yaml:"input"`
	// Output is the price of output tokens (reasoning tokens included).
	Output float64 `json:"output" yaml:"output"`
	// CacheRead is the price of input tokens read from the prompt cache (0: Input).
	CacheRead float64 `json:"cache_read,omitempty" yaml:"cache_read,omitempty"`
	// CacheWrite is the price of input tokens written to the prompt cache (0: Input).
	CacheWrite float64 `json:"cache_write,omitempty" yaml:"cache_write,omitempty"`
}

// Tokens is what one model call used, in the same four kinds on every API: OpenAI's
// prompt tokens are split into fresh input and cached reads; Anthropic's are already.
type Tokens struct {
	Input      int64 `json:"input_tokens" yaml:"input_tokens"`
	Output     int64 `json:"output_tokens" yaml:"output_tokens"`
	CacheRead  int64 `json:"cache_read_tokens,omitempty" yaml:"cache_read_tokens,omitempty"`
	CacheWrite int64 `json:"cache_write_tokens,omitempty" yaml:"cache_write_tokens,omitempty"`
}

// Add adds u to t.
func (t *Tokens) Add(u Tokens) {
	t.Input += u.Input
	t.Output += u.Output
	t.CacheRead += u.CacheRead
	t.CacheWrite += u.CacheWrite
}

// USD is what the tokens cost at p.
func (p Price) USD(t Tokens) float64 {
	cr, cw := p.CacheRead, p.CacheWrite
	if cr == 0 {
		cr = p.Input
	}
	if cw == 0 {
		cw = p.Input
	}
	usd := (float64(t.Input)*p.Input + float64(t.Output)*p.Output + float64(t.CacheRead)*cr + float64(t.CacheWrite)*cw) / 1e6
	return Round(usd)
}

// Round keeps money to a millionth of a dollar, so that sums read the same whatever
// order they were added in.
func Round(usd float64) float64 { return math.Round(usd*1e6) / 1e6 }

// Table is a price per model name. A model is priced by its exact name, or by its name
// without a snapshot date ("claude-sonnet-4-5" prices "claude-sonnet-4-5-20250929",
// "gpt-4o" prices "gpt-4o-2024-08-06"), never by a shorter name that begins it: a newer
// version ("claude-opus-4-8") is not priced as an older one ("claude-opus-4", three times
// dearer), it is unpriced until model.prices names it.
type Table map[string]Price

// snapshotDate is the date a vendor appends to a model's name for one snapshot of it.
var snapshotDate = regexp.MustCompile(`-(\d{8}|\d{4}-\d{2}-\d{2})$`)

// Lookup finds the price of model.
func (t Table) Lookup(model string) (Price, bool) {
	if p, ok := t[model]; ok {
		return p, true
	}
	if base := snapshotDate.ReplaceAllString(model, ""); base != model {
		if p, ok := t[base]; ok {
			return p, true
		}
	}
	return Price{}, false
}

// With is the table with over's prices in place of (or besides) its own.
func (t Table) With(over Table) Table {
	out := Table{}
	for k, v := range t {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// PricesAsOf is the day Defaults were taken from the vendors' published price lists.
const PricesAsOf = "2025-11-24"

// Defaults are the list prices of common models (USD per million tokens, as the vendors
// published them on PricesAsOf; docs/model.md), each row one version by its exact name. A
// spec's model.prices overrides them and adds models; a model in neither is counted in
// tokens and named as unpriced, never guessed.
var Defaults = Table{
	"claude-opus-4-5":   {Input: 5, Output: 25, CacheRead: 0.5, CacheWrite: 6.25},
	"claude-opus-4-1":   {Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75},
	"claude-opus-4-0":   {Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75},
	"claude-opus-4":     {Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75}, // claude-opus-4-20250514
	"claude-sonnet-4-5": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
	"claude-sonnet-4-0": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
	"claude-sonnet-4":   {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}, // claude-sonnet-4-20250514
	"claude-3-7-sonnet": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
	"claude-haiku-4-5":  {Input: 1, Output: 5, CacheRead: 0.1, CacheWrite: 1.25},
	"claude-3-5-haiku":  {Input: 0.8, Output: 4, CacheRead: 0.08, CacheWrite: 1},
	"gpt-5":             {Input: 1.25, Output: 10, CacheRead: 0.125},
	"gpt-5-mini":        {Input: 0.25, Output: 2, CacheRead: 0.025},
	"gpt-5-nano":        {Input: 0.05, Output: 0.4, CacheRead: 0.005},
	"gpt-4.1":           {Input: 2, Output: 8, CacheRead: 0.5},
	"gpt-4.1-mini":      {Input: 0.4, Output: 1.6, CacheRead: 0.1},
	"gpt-4.1-nano":      {Input: 0.1, Output: 0.4, CacheRead: 0.025},
	"gpt-4o":            {Input: 2.5, Output: 10, CacheRead: 1.25},
	"gpt-4o-mini":       {Input: 0.15, Output: 0.6, CacheRead: 0.075},
	"o3":                {Input: 2, Output: 8, CacheRead: 0.5},
	"o4-mini":           {Input: 1.1, Output: 4.4, CacheRead: 0.275},
}

// Usage sums the model calls of a trial (or a run): tokens, and money where every
// model was priced.
type Usage struct {
	// Calls counts the model calls whose response declared its usage; Unread those whose
	// response declared none (an OpenAI stream without stream_options.include_usage, an
	// error): their tokens are unknown, so the sums are a floor.
	Calls  int `json:"calls"`
	Unread int `json:"unread,omitempty"`
	Tokens
	// USD is the money of the priced calls.
	USD float64 `json:"usd"`
	// Unpriced names the models with no price in the table: their tokens are counted,
	// their money is not in USD.
	Unpriced []string `json:"unpriced,omitempty"`
}

// AddCall counts one call of model that used t, priced by table.
func (u *Usage) AddCall(table Table, model string, t Tokens) (usd float64, priced bool) {
	u.Calls++
	u.Tokens.Add(t)
	p, ok := table.Lookup(model)
	if !ok {
		u.addUnpriced(model)
		return 0, false
	}
	usd = p.USD(t)
	u.USD = Round(u.USD + usd)
	return usd, true
}

// Add adds another sum to u.
func (u *Usage) Add(o Usage) {
	u.Calls += o.Calls
	u.Unread += o.Unread
	u.Tokens.Add(o.Tokens)
	u.USD = Round(u.USD + o.USD)
	for _, m := range o.Unpriced {
		u.addUnpriced(m)
	}
}

func (u *Usage) addUnpriced(model string) {
	if model == "" {
		model = "(unnamed)"
	}
	for _, m := range u.Unpriced {
		if m == model {
			return
		}
	}
	// A new slice: a copy handed out earlier (Stats) must not change under its reader.
	u.Unpriced = append(slices.Clone(u.Unpriced), model)
	sort.Strings(u.Unpriced)
}

// Complete says every call's money is known: each declared its usage and was priced.
func (u Usage) Complete() bool { return u.Unread == 0 && len(u.Unpriced) == 0 }

// Format is money as a person reads it: $0.0123, $1.23, $1,234.56.
func Format(usd float64) string {
	switch {
	case usd == 0:
		return "$0"
	case usd < 0.01:
		return fmt.Sprintf("$%.4f", usd)
	case usd < 100:
		return fmt.Sprintf("$%.2f", usd)
	}
	s := fmt.Sprintf("%.2f", usd)
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return "$" + b.String() + "." + frac
}
