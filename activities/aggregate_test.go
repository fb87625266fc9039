package activities

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
)

func TestAggregate(t *testing.T) {
	a, env := newActivities(t)
	yaml := exampleYAML(t, "  timeout: 60s\n", "  timeout: 60s\n  env: {API_KEY: sk-secret}\n")
	s, err := spec.Parse("support-ticket.yaml", yaml)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := spec.NewPlan(s, []string{"clean", "phantom_success@update_ticket"}, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	result := func(i int, outcome string, worldOK bool) run.TrialResult {
		p := plan.Trials[i]
		return run.TrialResult{ID: p.ID, Cell: p.Cell, Condition: p.Condition, Rep: p.Rep, Outcome: outcome, WorldOK: worldOK}
	}
	in := run.AggregateInput{
		RunID: "r1", OutDir: filepath.Join(t.TempDir(), "out"),
		Spec: run.SpecRef{Name: s.Name, Path: "examples/support-ticket.yaml", YAML: yaml},
		Plan: *plan, Started: time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC),
		// Out of order, as children finish.
		Results: []run.TrialResult{
			result(3, run.OutcomeCompleted, false), result(0, run.OutcomeCompleted, true),
			result(2, run.OutcomeTimedOut, false), result(1, run.OutcomeCompleted, true),
		},
	}
	in.Results[1].Verdict = "correct"
	sum := must[run.Summary](t, env, a.Aggregate, in)
	if sum.Trials != 4 || sum.ByOutcome[run.OutcomeCompleted] != 3 || sum.ByOutcome[run.OutcomeTimedOut] != 1 || sum.ByVerdict["correct"] != 1 || len(sum.ByVerdict) != 1 {
		t.Errorf("summary %+v", sum)
	}

	var m Manifest
	b, err := os.ReadFile(filepath.Join(in.OutDir, "manifest.json"))
	if err != nil || json.Unmarshal(b, &m) != nil {
		t.Fatalf("manifest.json: %v\n%s", err, b)
	}
	if m.RunID != "r1" || m.Spec.Name != "support-ticket" || m.Trials != 4 || len(m.Conditions) != 2 || !m.Started.Equal(in.Started) || m.Ended.IsZero() ||
		!strings.HasPrefix(m.Plan, "plan 4 trials of support-ticket") || !strings.HasPrefix(m.AgentCommand, "chaos agent scripted") {
		t.Errorf("manifest %+v", m)
	}
	if strings.Contains(string(b), "sk-secret") {
		t.Errorf("manifest.json holds a value of agent.env:\n%s", b)
	}

	var verdicts []run.TrialResult
	b, err = os.ReadFile(filepath.Join(in.OutDir, "verdicts.json"))
	if err != nil || json.Unmarshal(b, &verdicts) != nil || len(verdicts) != 4 {
		t.Fatalf("verdicts.json: %v\n%s", err, b)
	}
	for i := 1; i < len(verdicts); i++ {
		if verdicts[i-1].ID >= verdicts[i].ID {
			t.Errorf("verdicts.json is not sorted by trial id: %s before %s", verdicts[i-1].ID, verdicts[i].ID)
		}
	}

	b, err = os.ReadFile(filepath.Join(in.OutDir, "summary.txt"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, want := range []string{"run r1: plan 4 trials", "condition", "world ok", "correct", "unjudged"} {
		if !strings.Contains(text, want) {
			t.Errorf("summary.txt lacks %q:\n%s", want, text)
		}
	}
	// condition trials world-ok completed aborted timed_out failed correct unjudged
	for _, want := range [][]string{
		{"clean", "2", "2/2", "2", "0", "0", "0", "1", "1"},
		{"phantom_success@update_ticket", "2", "0/2", "1", "0", "1", "0", "0", "2"},
	} {
		found := false
		for _, line := range strings.Split(text, "\n") {
			if strings.Join(strings.Fields(line), " ") == strings.Join(want, " ") {
				found = true
			}
		}
		if !found {
			t.Errorf("summary.txt has no row %v:\n%s", want, text)
		}
	}
	if entries, _ := os.ReadDir(in.OutDir); len(entries) != 3 {
		t.Errorf("the run folder holds %d entries; want the three files and no temporary ones", len(entries))
	}
}
