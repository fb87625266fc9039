package faults_test

import (
	"fmt"

	"github.com/crashwall/chaos/faults"
)

// A transient error armed on the 2nd call to update_ticket fires there and nowhere else.
func ExampleDecide() {
	c := faults.Condition{ID: "transient_error@update_ticket#2", Family: "transient_error", Tool: "update_ticket", At: 2}
	for call := 1; call <= 3; call++ {
		pos := faults.Position{Tool: "update_ticket", Write: true, Call: call, Target: call}
		fmt.Printf("call %d: %v\n", call, faults.Decide(42, c, pos))
	}
	// Output:
	// call 1: false
	// call 2: true
	// call 3: false
}

// With a rate, which calls are hit is drawn from the trial's seed, the condition and the
// call's place: the same seed hits the same calls, run after run.
func ExampleDecide_rate() {
	c := faults.Condition{ID: "permanent_error@get_ticket", Family: "permanent_error", Tool: "get_ticket", At: 1, Every: true, Rate: 0.5}
	for _, seed := range []int64{7, 7, 8} {
		var hit []int
		for call := 1; call <= 8; call++ {
			if faults.Decide(seed, c, faults.Position{Tool: "get_ticket", Call: call, Target: call}) {
				hit = append(hit, call)
			}
		}
		fmt.Printf("seed %d hits calls %v\n", seed, hit)
	}
	// Output:
	// seed 7 hits calls [1 3 5 6 8]
	// seed 7 hits calls [1 3 5 6 8]
	// seed 8 hits calls [1 2 3 4 5 8]
}

// A session drop armed on update_ticket ends the session from its 2nd call on: every
// call to every tool is hit from there.
func ExampleDecide_sessionDrop() {
	c := faults.Condition{ID: "session_drop@update_ticket", Family: "session_drop", Tool: "update_ticket", At: 1}
	calls := []faults.Position{
		{Tool: "get_ticket", Call: 1, Target: 0},
		{Tool: "update_ticket", Write: true, Call: 1, Target: 1},
		{Tool: "get_ticket", Call: 2, Target: 1},
		{Tool: "update_ticket", Write: true, Call: 2, Target: 2},
		{Tool: "get_ticket", Call: 3, Target: 2},
	}
	for _, pos := range calls {
		fmt.Printf("%s #%d: %v\n", pos.Tool, pos.Call, faults.Decide(1, c, pos))
	}
	// Output:
	// get_ticket #1: false
	// update_ticket #1: false
	// get_ticket #2: false
	// update_ticket #2: true
	// get_ticket #3: true
}
