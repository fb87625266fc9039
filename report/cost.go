package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/crashwall/chaos/cost"
	"github.com/crashwall/chaos/run"
)

// CellCost is what the trials of a cell (or of the whole run, Cell "") cost.
type CellCost struct {
	Cell string `json:"cell"`
	// Trials counts the trials with a cost; Spent sums their money as a budget counts it
	// (run.TrialCost.Spent); AgentUSD sums what the agents reported themselves, where they did.
	Trials   int        `json:"trials"`
	Usage    cost.Usage `json:"usage"`
	Spent    float64    `json:"spent_usd"`
	AgentUSD *float64   `json:"agent_usd,omitempty"`
}

// Costs sums the trials' costs per cell (in cell order) and for the run; cells is nil
// when no trial has a cost.
func Costs(results []run.TrialResult) (cells []CellCost, total CellCost) {
	by := map[string]*CellCost{}
	for _, r := range results {
		if r.Cost == nil {
			continue
		}
		c := by[r.Cell]
		if c == nil {
			c = &CellCost{Cell: r.Cell}
			by[r.Cell] = c
		}
		for _, x := range []*CellCost{c, &total} {
			x.Trials++
			x.Usage.Add(r.Cost.Usage)
			x.Spent = cost.Round(x.Spent + r.Cost.Spent())
			if r.Cost.AgentUSD != nil {
				v := *r.Cost.AgentUSD
				if x.AgentUSD != nil {
					v = cost.Round(v + *x.AgentUSD)
				}
				x.AgentUSD = &v
			}
		}
	}
	for _, c := range by {
		cells = append(cells, *c)
	}
	sort.Slice(cells, func(i, j int) bool { return cells[i].Cell < cells[j].Cell })
	return cells, total
}

// CostLine says in a line what a cell or a run cost: chaos's count of the money (the
// tokens the model proxy saw at list prices), the tokens, what the count leaves out, and
// apart, labelled as such, the agent's own figure and the one a budget counts when that
// is not chaos's.
func (c CellCost) CostLine() string {
	u := c.Usage
	s := fmt.Sprintf("%s over %d trial(s), %s a trial; %d model calls, %d tokens in (%d from cache), %d out",
		cost.Format(u.USD), c.Trials, cost.Format(u.USD/float64(max(c.Trials, 1))), u.Calls, u.Input+u.CacheRead+u.CacheWrite, u.CacheRead, u.Output)
	var gaps []string
	if u.Unread > 0 {
		gaps = append(gaps, fmt.Sprintf("%d calls declared no usage", u.Unread))
	}
	if len(u.Unpriced) > 0 {
		gaps = append(gaps, "no price for "+strings.Join(u.Unpriced, ", ")+" (model.prices)")
	}
	if len(gaps) > 0 {
		s += " (a floor: " + strings.Join(gaps, "; ") + ")"
	}
	// chaos's figure is the tokens the model proxy saw at the table's list prices; what
	// the agent says it spent is its own reckoning (its prices, its retries, calls that
	// bypassed the proxy), shown apart so that the two are never read as one.
	s += " (chaos's count at list prices of " + cost.PricesAsOf + " or model.prices)"
	if c.AgentUSD != nil {
		s += fmt.Sprintf(". Apart, the agent's own report of its spend: %s", cost.Format(*c.AgentUSD))
	}
	if c.Spent != u.USD {
		s += fmt.Sprintf(". A budget counts %s: the agent's figure where chaos's count is a floor below it", cost.Format(c.Spent))
	}
	return s
}
