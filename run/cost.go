package run

import "github.com/crashwall/chaos/cost"

// TrialCost is what a trial's model calls used, as the model proxy read it from every
// response (tokens, and money by the spec's price table), with what the agent itself
// reported beside it (Claude Code's total_cost_usd), a second source.
type TrialCost struct {
	cost.Usage
	// AgentUSD is the agent's own figure (nil: it reported none).
	AgentUSD *float64 `json:"agent_usd,omitempty"`
}

// Spent is the money a budget counts: the proxy's, unless some calls could not be
// priced or read, or there was no proxy, and the agent's own figure is higher.
func (c *TrialCost) Spent() float64 {
	if c == nil {
		return 0
	}
	if c.AgentUSD != nil && (!c.Complete() || c.Calls == 0) && *c.AgentUSD > c.USD {
		return *c.AgentUSD
	}
	return c.USD
}
