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
	c.Usage.Calls = 3
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
