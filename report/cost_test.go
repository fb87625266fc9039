package report

import (
	"strings"
	"testing"

	"github.com/crashwall/chaos/cost"
)

// TestCostLineKeepsTheAgentsFigureApart: chaos's own count is labelled as chaos's, with the
// date of its price list; what the agent reports it spent follows as a sentence of its own.
func TestCostLineKeepsTheAgentsFigureApart(t *testing.T) {
	agent := 0.39
	c := CellCost{Cell: "main", Trials: 1, Spent: 1.17, AgentUSD: &agent}
	c.Usage.Calls, c.Usage.USD = 3, 1.17
	got := c.CostLine()
	for _, want := range []string{
		"$1.17 over 1 trial(s)",
		"(chaos's count at list prices of " + cost.PricesAsOf + " or model.prices). Apart, the agent's own report of its spend: $0.39",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("CostLine = %q, want it to contain %q", got, want)
		}
	}
	if strings.Contains(got, "; the agent reported") {
		t.Errorf("CostLine = %q: the agent's figure reads as part of chaos's sentence", got)
	}
}

// TestCostLineNeverCallsTheAgentsFigureChaoss: when chaos could price none of the calls
// (a model the table lacks), its count is $0 and a floor, and the agent's figure, which a
// budget then counts, is labelled as the agent's, never as chaos's count.
func TestCostLineNeverCallsTheAgentsFigureChaoss(t *testing.T) {
	agent := 0.78
	c := CellCost{Cell: "main", Trials: 2, Spent: 0.78, AgentUSD: &agent}
	c.Usage.Calls, c.Usage.Unpriced = 8, []string{"claude-opus-4-8"}
	got := c.CostLine()
	for _, want := range []string{
		"$0 over 2 trial(s)",
		"(a floor: no price for claude-opus-4-8 (model.prices))",
		"Apart, the agent's own report of its spend: $0.78",
		"A budget counts $0.78: the agent's figure",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("CostLine = %q, want it to contain %q", got, want)
		}
	}
	if i := strings.Index(got, "chaos's count"); i < 0 || strings.Contains(got[:i], "0.78") {
		t.Errorf("CostLine = %q: the agent's $0.78 is written before it is said to be the agent's", got)
	}
}
