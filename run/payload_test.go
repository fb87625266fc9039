package run_test

import (
	"testing"
	"time"

	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
)

// The payloads that carry a run's plan (the experiment's start input, which every
// continue-as-new sends again, and Aggregate's input) do not grow with the number of
// trials: at 200 and at 20,000 planned trials they differ by a few digits, stay under
// 2 KiB beyond the spec's own YAML, and still give the workflow every trial.
func TestPayloadsDoNotGrowWithTrials(t *testing.T) {
	yaml := []byte("name: overhead\ntask: do nothing\ntools: [{name: noop}]\nagent: {command: 'true'}\n")
	sizes := map[int][2]int{}
	for _, reps := range []int{100, 10_000} {
		l := &spec.Layout{Tasks: []string{"main-task"}, Seed: 42}
		conds := []string{"clean", "phantom_success@noop"}
		cells, trials, err := l.Expand(conds, reps)
		if err != nil {
			t.Fatal(err)
		}
		plan := spec.Plan{SpecName: "overhead", Conditions: conds, Cells: cells, Trials: trials, Replicates: reps, Concurrency: 16, Layout: l}
		ref := run.SpecRef{Name: "overhead", Path: "/specs/overhead.yaml", YAML: yaml}
		started := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
		start := payloadSize(t, run.ExperimentInput{RunID: "20261201-000000-abcd", Spec: ref, Plan: plan, OutDir: "/runs/x", Started: started})
		agg := payloadSize(t, run.AggregateInput{RunID: "20261201-000000-abcd", OutDir: "/runs/x", Spec: ref, Plan: plan, Started: started})
		sizes[len(trials)] = [2]int{start, agg}
		t.Logf("%d planned trials: start input %d bytes, Aggregate's input %d bytes", len(trials), start, agg)
		for what, n := range map[string]int{"start input": start, "Aggregate's input": agg} {
			if n > len(yaml)+2<<10 {
				t.Errorf("%d trials: the %s is %d bytes, over the spec's YAML (%d) + 2 KiB", len(trials), what, n, len(yaml))
			}
		}

		// What the workflow reads back is every planned trial.
		var in run.ExperimentInput
		p, err := converter.GetDefaultDataConverter().ToPayload(run.ExperimentInput{Plan: plan})
		if err != nil {
			t.Fatal(err)
		}
		if err := converter.GetDefaultDataConverter().FromPayload(p, &in); err != nil {
			t.Fatal(err)
		}
		last := trials[len(trials)-1]
		if got := in.Plan.Trials; len(got) != len(trials) || got[len(got)-1].ID != last.ID || got[len(got)-1].Seed != last.Seed {
			t.Fatalf("%d trials read back, want %d ending with %+v", len(got), len(trials), last)
		}
	}
	small, large := sizes[200], sizes[20_000]
	for i, what := range []string{"start input", "Aggregate's input"} {
		if grew := large[i] - small[i]; grew > 8 {
			t.Errorf("the %s grew by %d bytes from 200 to 20,000 trials", what, grew)
		}
	}
}

func payloadSize(t *testing.T, v any) int {
	t.Helper()
	p, err := converter.GetDefaultDataConverter().ToPayload(v)
	if err != nil {
		t.Fatal(err)
	}
	return proto.Size(p)
}
