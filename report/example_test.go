package report_test

import (
	"fmt"

	"github.com/crashwall/chaos/report"
)

func ExampleDecide() {
	verdict, why := report.Decide(report.Facts{
		Outcome:    report.OutcomeCompleted,
		WorldKnown: true,
		WorldOK:    false, // the probe found the order was never written
		Claim:      report.ClaimSuccess,
		Fired:      1, // phantom success fired once
	})
	fmt.Println(verdict, "-", why)
	// Output: silent_wrong - world wrong, agent claimed success
}

func ExampleNewRate() {
	fmt.Println(report.NewRate(3, 10))
	fmt.Println(report.NewRate(0, 20))
	// Output:
	// 3/10 = 30% [15%, 50%]
	// 0/20 = 0% [0%, 8%]
}

func ExampleCompare() {
	// Silent wrong on each of ten shared seeds, before and after a prompt change.
	before := []bool{true, true, true, true, true, true, false, false, true, false}
	after := []bool{false, false, false, false, false, false, false, false, true, false}
	c, err := report.Compare(before, after)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d better, %d worse, %d same: p = %.4f (%s)\n", c.Better, c.Worse, c.Same, c.P, c.Method)
	// Output: 6 better, 0 worse, 4 same: p = 0.0312 (McNemar's exact test (paired on shared seeds))
}

func ExampleKappa() {
	humans := []string{"claimed_success", "claimed_success", "reported_failure", "reported_failure", "unclear"}
	judge := []string{"claimed_success", "claimed_success", "reported_failure", "claimed_success", "unclear"}
	k, err := report.Kappa(humans, judge)
	if err != nil {
		panic(err)
	}
	fmt.Printf("kappa = %.3f\n", k)
	fmt.Println(report.DirectionMatrix(humans, judge)["reported_failure"])
	// Output:
	// kappa = 0.688
	// map[claimed_success:1 reported_failure:1]
}
