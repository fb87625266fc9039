package trial

import (
	"github.com/crashwall/chaos/cost"
	"github.com/crashwall/chaos/probes"
	"github.com/crashwall/chaos/proxies/llm"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/run"
)

// costEvidence is the trial's spend: what its model calls cost (the model proxy's sums,
// from the live proxy model, else from the record) and the agent's own figure.
type costEvidence struct {
	model *llm.ModelProxy // nil: no model proxy, or the trial is not live here
}

func (costEvidence) part() string { return "cost" }

// ending: an agent that ended by itself after its model calls crossed
// limits.max_cost_usd (the proxy refused its next call, and it gave up or crashed before
// the watcher's abort reached it) was stopped by the limit all the same.
func (e costEvidence) ending(v *verification) {
	if v.spec == nil || v.res.Outcome != run.OutcomeCompleted {
		return
	}
	if why := overLimit(trialCost(e.model, v.log, v.closing).Spent(), v.spec.Limits.MaxCostUSD); why != "" {
		v.res.Outcome, v.res.Reason = run.OutcomeAborted, why
		v.ranToItsEnd = false
	}
}

func (e costEvidence) calls(v *verification) {
	v.res.Cost = trialCost(e.model, v.log, v.closing)
}

// trialCost is what the trial's model calls cost: the live model proxy's sums, else the
// sums of the record's model rows (a worker that is not the one that ran the trial), with
// the agent's own figure from its closing message (Claude Code's total_cost_usd). Nil when
// there is neither a model call nor the agent's figure.
func trialCost(model *llm.ModelProxy, log *record.Log, closing probes.Closing) *run.TrialCost {
	c := &run.TrialCost{}
	switch {
	case model != nil:
		c.Usage = model.Usage()
	case log != nil:
		c.Usage = recordUsage(log)
	}
	if v, ok := closing.Fields["cost"].(float64); ok {
		c.AgentUSD = &v
	}
	if c.Calls == 0 && c.Unread == 0 && c.AgentUSD == nil {
		return nil
	}
	return c
}

// recordUsage sums the usage of the record's model rows.
func recordUsage(log *record.Log) cost.Usage {
	var u cost.Usage
	for _, r := range log.Rows {
		if r.Transport != llm.TransportLLM || (r.Type != record.TypeCall && r.Type != record.TypeError) {
			continue
		}
		if r.Usage == nil {
			if r.Type == record.TypeCall {
				u.Unread++
			}
			continue
		}
		t := cost.Tokens{Input: r.Usage.Input, Output: r.Usage.Output, CacheRead: r.Usage.CacheRead, CacheWrite: r.Usage.CacheWrite}
		var one cost.Usage
		if r.Usage.USD != nil {
			one = cost.Usage{Calls: 1, Tokens: t, USD: *r.Usage.USD}
		} else {
			one.AddCall(cost.Table{}, r.Usage.Model, t)
		}
		u.Add(one)
	}
	return u
}

// spend counts a model call's money and returns the reason to abort when the trial has
// spent more than limits.max_cost_usd.
func (w *watcher) spend(r record.Row) string {
	if r.Usage == nil || r.Usage.USD == nil {
		return ""
	}
	w.spent = cost.Round(w.spent + *r.Usage.USD)
	return overLimit(w.spent, w.limits.MaxCostUSD)
}

// overLimit is why a trial that spent spent on model calls is stopped under limits.max_cost_usd
// (limit, 0: none), or "".
func overLimit(spent, limit float64) string {
	if limit > 0 && spent > limit {
		return "the trial spent " + cost.Format(spent) + " on model calls, more than its limit of " + cost.Format(limit) + " (limits.max_cost_usd)"
	}
	return ""
}
