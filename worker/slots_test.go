package worker

import (
	"strings"
	"testing"
)

// A worker's identity on the trial queue carries its slots, and a run is refused when the
// workers listed hold fewer trials than it runs at once, or there are none, with a message
// that names each worker and its slots.
func TestTrialSlots(t *testing.T) {
	id := TrialIdentity(16)
	if n, ok := TrialSlots(id); !ok || n != 16 {
		t.Fatalf("TrialSlots(%q) = %d, %v; want 16", id, n, ok)
	}
	if _, ok := TrialSlots("123@host"); ok {
		t.Error("an identity without slots was read as a chaos worker's")
	}
	a := Poller{Identity: "1@a chaos trials=2", Slots: 2}
	b := Poller{Identity: "2@b chaos trials=3", Slots: 3}
	other := Poller{Identity: "3@c"}
	for _, tc := range []struct {
		name        string
		pollers     []Poller
		concurrency int
		want        []string // "" in want: no problem
	}{
		{"enough", []Poller{a, b}, 5, nil},
		{"too few", []Poller{a, b, other}, 6, []string{"concurrency 6 is more than the workers of task queue q hold: 5 trials at once (1@a: 2, 2@b: 3, 3@c: slots not known)"}},
		{"none", nil, 1, []string{"no worker takes the trials of task queue q"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := SlotsProblem(tc.pollers, tc.concurrency, "q")
			if len(tc.want) == 0 && got != "" {
				t.Fatalf("SlotsProblem = %q, want none", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("SlotsProblem = %q, want it to say %q", got, w)
				}
			}
		})
	}
}

// This machine holds some trials, and a concurrency past what it holds is refused naming
// the limit.
func TestMachineCapacity(t *testing.T) {
	c := MachineCapacity()
	if c.Trials < 1 {
		t.Fatalf("this machine holds %d trials (%s)", c.Trials, c.Limit)
	}
	if CapacityProblem(c.Trials) != "" {
		t.Errorf("a concurrency of what the machine holds (%d) is refused", c.Trials)
	}
	if c.Trials < unlimited {
		if msg := CapacityProblem(c.Trials + 1); !strings.Contains(msg, c.Limit) {
			t.Errorf("CapacityProblem(%d) = %q, want it to name the limit %q", c.Trials+1, msg, c.Limit)
		}
	}
	t.Logf("this machine holds %d trials at once: %s", c.Trials, c.Limit)
}
