package run_test

import (
	"strings"
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

// The spec's text is in a batch's start once (TrialBatchInput), never in a trial's input:
// RunTrial's input is the same size with a spec of 100 bytes and of 200 KiB, and names
// the spec, the trial and its abort signal.
func TestTrialInputDoesNotGrowWithTheSpec(t *testing.T) {
	l := &spec.Layout{Tasks: []string{"main-task"}, Seed: 42}
	conds := []string{"clean", "phantom_success@noop"}
	cells, trials, err := l.Expand(conds, 100)
	if err != nil {
		t.Fatal(err)
	}
	plan := spec.Plan{SpecName: "overhead", Conditions: conds, Cells: cells, Trials: trials, Replicates: 100, Concurrency: 16, Layout: l}
	small := []byte("name: overhead\ntask: do nothing\ntools: [{name: noop}]\nagent: {command: 'true'}\n")
	large := append(append([]byte(nil), small...), []byte("# "+strings.Repeat("x", 200<<10)+"\n")...)
	sizes := map[int]int{}
	for _, yaml := range [][]byte{small, large} {
		batch := run.TrialBatchInput{RunID: "20261201-000000-abcd", OutDir: "/runs/x", Spec: run.SpecRef{Name: "overhead", Path: "/specs/overhead.yaml", YAML: yaml},
			Plan: plan, First: 0, End: 200, Concurrency: 16}
		in := batch.TrialInput(trials[7], "")
		if len(in.Spec.YAML) != 0 || in.Spec.Name != "overhead" || in.Trial.ID != trials[7].ID || in.AbortSignal != run.TrialAbortSignal(trials[7].ID) {
			t.Fatalf("trial input %+v: want the spec's name without its text, the trial and its abort signal", in)
		}
		if len(batch.Spec.YAML) != len(yaml) {
			t.Fatal("making a trial's input took the text from the batch's")
		}
		sizes[len(yaml)] = payloadSize(t, in)
		if start := payloadSize(t, batch); start < len(yaml) {
			t.Errorf("the batch's start input is %d bytes, less than the spec's %d: where is the spec?", start, len(yaml))
		}
	}
	t.Logf("RunTrial's input: %d bytes with a %d-byte spec, %d with a %d-byte spec", sizes[len(small)], len(small), sizes[len(large)], len(large))
	if sizes[len(small)] != sizes[len(large)] || sizes[len(small)] > 1<<10 {
		t.Errorf("RunTrial's input is %d bytes with the small spec and %d with the large: want the same, under 1 KiB", sizes[len(small)], sizes[len(large)])
	}
}
