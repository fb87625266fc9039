package spec_test

// These tests load specs with the model fault catalogue linked in: package faults
// registers it with the loader, and it builds on spec, so they live outside the package.

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/spec"
)

// modelBase is a small valid spec with a model section; its last key is model, so a case
// can add a key to it at line 8 or a top-level key at line 9.
const modelBase = `name: t
task: triage the ticket
agent: {command: "run {task} --llm {llm_url}"}
tools:
  - {name: update_ticket, effect: write}
model:
  upstream: http://127.0.0.1:9/v1
  fault: tool_error_single
`

func parse(t *testing.T, yaml string) (*spec.Spec, []string) {
	t.Helper()
	s, err := spec.Parse("spec.yaml", []byte(yaml))
	if err == nil {
		return s, nil
	}
	var errs *spec.Errors
	if !errors.As(err, &errs) {
		t.Fatalf("got %v, want *spec.Errors", err)
	}
	return nil, strings.Split(errs.Error(), "\n")
}

func TestModelSection(t *testing.T) {
	s, probs := parse(t, modelBase+"  rate: 0.25\n  steps: [update_ticket, choose_tool]\n  stale_values: {value: [normal]}\n  entities: {ticket: T-1}\n")
	if probs != nil {
		t.Fatal(strings.Join(probs, "\n"))
	}
	want := spec.ModelSpec{
		Upstream: "http://127.0.0.1:9/v1", Fault: "tool_error_single", Rate: 0.25,
		Steps:       []string{"update_ticket", "choose_tool"},
		StaleValues: map[string][]any{"value": {"normal"}},
		Entities:    map[string][]string{"ticket": {"T-1"}},
	}
	if !reflect.DeepEqual(s.Model, want) {
		t.Errorf("model\n got  %+v\n want %+v", s.Model, want)
	}
	if !s.Model.Armed() || s.Model.RateOrDefault() != 0.25 {
		t.Errorf("armed %v, rate %v; want armed at 0.25", s.Model.Armed(), s.Model.RateOrDefault())
	}

	// The defaults: fault none, rate 1, every step; a spec without the section has no proxy.
	s, _ = parse(t, strings.Replace(modelBase, "  fault: tool_error_single\n", "", 1))
	if s.Model.FaultName() != spec.NoModelFault || s.Model.RateOrDefault() != 1 || s.Model.Steps != nil || s.Model.Armed() {
		t.Errorf("defaults: %+v (fault %s, rate %v, armed %v)", s.Model, s.Model.FaultName(), s.Model.RateOrDefault(), s.Model.Armed())
	}
	s, _ = parse(t, strings.Replace(strings.Split(modelBase, "model:")[0], " --llm {llm_url}", "", 1))
	if s.Model.Upstream != "" || s.Model.Armed() {
		t.Errorf("no model section: %+v", s.Model)
	}
}

func TestModelProblems(t *testing.T) {
	known := strings.Join(faults.ModelFaultNames(), ", ")
	noModel := strings.Split(modelBase, "model:")[0]
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{"unknown fault, close to one", strings.Replace(modelBase, "tool_error_single", "tool_eror_single", 1),
			[]string{`spec.yaml:8: unknown model fault "tool_eror_single" (did you mean tool_error_single?) (known: ` + known + `)`}},
		{"unknown fault", strings.Replace(modelBase, "tool_error_single", "gremlins", 1),
			[]string{`spec.yaml:8: unknown model fault "gremlins" (known: ` + known + `)`}},
		{"a tool family is not a model fault", strings.Replace(modelBase, "tool_error_single", "phantom_success", 1),
			[]string{`spec.yaml:8: unknown model fault "phantom_success" (known: ` + known + `)`}},
		{"fault without upstream", strings.Replace(modelBase, "  upstream: http://127.0.0.1:9/v1\n", "", 1),
			[]string{
				`spec.yaml:3: agent.command: {llm_url} needs model.upstream, the base URL the model proxy forwards to`,
				`spec.yaml:7: model.fault tool_error_single needs model.upstream: the proxy that injects it forwards to that base URL`,
			}},
		{"llm_url without a model section", noModel,
			[]string{`spec.yaml:3: agent.command: {llm_url} needs model.upstream, the base URL the model proxy forwards to`}},
		{"upstream not http", strings.Replace(modelBase, "http://127.0.0.1:9/v1", "ftp://models.example.com", 1),
			[]string{`spec.yaml:7: model.upstream "ftp://models.example.com": must be an http:// or https:// base URL`}},
		{"upstream with a key in it", strings.Replace(modelBase, "http://127.0.0.1:9/v1", "https://user:sk-123@api.example.com/v1", 1),
			[]string{`spec.yaml:7: model.upstream "https://user:sk-123@api.example.com/v1": must not carry credentials; the agent's API key header is forwarded as it is`}},
		{"rate above 1", modelBase + "  rate: 1.5\n",
			[]string{`spec.yaml:9: model.rate must be from 0 to 1, got 1.5`}},
		{"rate 0", modelBase + "  rate: 0\n",
			[]string{`spec.yaml:9: model.rate 0 never fires: to run clean, set model.fault: none`}},
		{"rate not a number", modelBase + "  rate: often\n",
			[]string{`spec.yaml:9: model.rate must be a number from 0 to 1, got "often"`}},
		{"step twice", modelBase + "  steps: [a, a]\n",
			[]string{`spec.yaml:9: model.steps lists "a" twice`}},
		{"stale values not a mapping", modelBase + "  stale_values: [a]\n",
			[]string{`spec.yaml:9: model.stale_values must be a mapping of argument names to lists of values, got a list`}},
		{"entities not text", modelBase + "  entities: {ticket: [{a: 1}]}\n",
			[]string{`spec.yaml:9: model.entities.ticket must be a list of text, got a mapping in it`}},
		{"unknown key in model", modelBase + "  base_url: x\n",
			[]string{`spec.yaml:9: unknown key "base_url" in model (did you mean upstream?)`}},
		{"model not a mapping", noModel + "model: openai\n",
			[]string{
				`spec.yaml:3: agent.command: {llm_url} needs model.upstream, the base URL the model proxy forwards to`,
				`spec.yaml:6: model must be a mapping, got "openai"`,
			}},

		// Outcomes.
		{"outcome without name", modelBase + "outcomes:\n  failures:\n    - {closing: oops}\n",
			[]string{`spec.yaml:11: outcomes.failures #1 has no name`}},
		{"outcome with neither", modelBase + "outcomes:\n  failures:\n    - {name: lost}\n",
			[]string{`spec.yaml:11: outcome "lost" needs one of closing (a regex on the closing message) or state (a check of the final world)`}},
		{"outcome with both", modelBase + "outcomes:\n  successes:\n    - {name: ok, closing: done, state: {key: a, equals: 1}}\n",
			[]string{`spec.yaml:11: outcome "ok" needs one of closing (a regex on the closing message) or state (a check of the final world)`}},
		{"outcome regex", modelBase + "outcomes:\n  failures:\n    - {name: lost, closing: \"(oops\"}\n",
			[]string{"spec.yaml:11: outcome \"lost\": closing: error parsing regexp: missing closing ): `(oops`"}},
		{"outcome state check", modelBase + "outcomes:\n  failures:\n    - {name: lost, state: {key: priority}}\n",
			[]string{`spec.yaml:11: state check on "priority" needs one of equals, not_equals, contains, matches, absent`}},
		{"outcome twice", modelBase + "outcomes:\n  failures:\n    - {name: lost, closing: a}\n  successes:\n    - {name: lost, closing: b}\n",
			[]string{`spec.yaml:13: outcome "lost" is declared twice (first at line 11)`}},
		{"outcome named like a verdict", modelBase + "outcomes:\n  failures:\n    - {name: silent_wrong, closing: a}\n",
			[]string{`spec.yaml:11: outcome "silent_wrong": the name is taken by a built-in verdict; choose another`}},
		{"outcomes key", modelBase + "outcomes:\n  failure:\n    - {name: lost, closing: a}\n",
			[]string{`spec.yaml:10: unknown key "failure" in outcomes (did you mean failures?)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, got := parse(t, tt.yaml)
			if s != nil {
				t.Fatalf("parsed with no problem; want %q", tt.want)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(tt.want, "\n\t"))
			}
		})
	}
}

func TestOutcomes(t *testing.T) {
	s, probs := parse(t, modelBase+`outcomes:
  failures:
    - {name: lost_write, state: {key: priority, not_equals: urgent}}
  successes:
    - {name: says_done, closing: "(?i)done"}
`)
	if probs != nil {
		t.Fatal(strings.Join(probs, "\n"))
	}
	all := s.Outcomes.All()
	if len(all) != 2 || all[0].Name != "lost_write" || !all[0].Failure || all[0].State == nil || all[0].State.Op != "not_equals" ||
		all[1].Name != "says_done" || all[1].Failure || all[1].Closing != "(?i)done" {
		t.Errorf("outcomes: %+v", all)
	}
}

// TestIdentity: the model table is not part of the identity that pairs runs; anything
// else is, and IdentityDiff names it.
func TestIdentity(t *testing.T) {
	clean, _ := parse(t, strings.Replace(modelBase, "tool_error_single", "none", 1))
	faulted, _ := parse(t, modelBase+"  rate: 0.5\n  steps: [x]\n")
	other, _ := parse(t, strings.Replace(modelBase, "http://127.0.0.1:9/v1", "https://api.openai.com/v1", 1))
	if clean.Identity() != faulted.Identity() || clean.Identity() != other.Identity() {
		t.Errorf("identities differ with the model table only: %s %s %s", clean.Identity(), faulted.Identity(), other.Identity())
	}
	if d := spec.IdentityDiff(clean, faulted); d != nil {
		t.Errorf("IdentityDiff = %v, want none", d)
	}
	moved, _ := parse(t, "# a comment moves every line\n"+modelBase)
	if moved.Identity() != clean.Identity() {
		t.Error("the identity depends on line numbers")
	}
	seeded, _ := parse(t, modelBase+"seed: 9\ntask: another task\n")
	if seeded != nil {
		t.Fatal("a spec with task twice parsed")
	}
	seeded, _ = parse(t, strings.Replace(modelBase, "name: t\n", "name: t\nseed: 9\n", 1))
	if seeded.Identity() == clean.Identity() {
		t.Error("a different seed has the same identity")
	}
	if d := spec.IdentityDiff(clean, seeded); !slices.Equal(d, []string{"seed"}) {
		t.Errorf("IdentityDiff = %v, want [seed]", d)
	}
}

func TestExpandUpstream(t *testing.T) {
	env := map[string]string{"STANDIN": "http://127.0.0.1:4000", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	tests := []struct {
		upstream, want, err string
	}{
		{"${STANDIN}/v1", "http://127.0.0.1:4000/v1", ""},
		{"https://api.anthropic.com", "https://api.anthropic.com", ""},
		{"${NOPE}/v1", "", `model.upstream "${NOPE}/v1": the environment variable NOPE is not set`},
		{"${EMPTY}", "", `model.upstream "${EMPTY}": the environment variable EMPTY is not set`},
		{"${STANDIN}#x", "", `model.upstream "http://127.0.0.1:4000#x": must not have a #fragment`},
	}
	for _, tt := range tests {
		got, err := spec.ModelSpec{Upstream: tt.upstream}.ExpandUpstream(lookup)
		if got != tt.want || (err == nil) != (tt.err == "") || (err != nil && err.Error() != tt.err) {
			t.Errorf("ExpandUpstream(%q) = %q, %v; want %q, %q", tt.upstream, got, err, tt.want, tt.err)
		}
	}
	// A ${VAR} is checked when it is expanded, not when the spec is loaded.
	if _, probs := parse(t, strings.Replace(modelBase, "http://127.0.0.1:9/v1", "${CHAOS_TEST_UNSET}/v1", 1)); probs != nil {
		t.Errorf("an upstream with ${VAR}: %v", probs)
	}
}

func TestCheckTokensLLMURL(t *testing.T) {
	s, _ := parse(t, strings.Replace(strings.Split(modelBase, "model:")[0], " --llm {llm_url}", "", 1))
	if err := spec.CheckTokens("agent --base-url {llm_url}", s); err == nil || !strings.Contains(err.Error(), "{llm_url} needs model.upstream") {
		t.Errorf("CheckTokens with {llm_url} and no upstream: %v", err)
	}
	s, _ = parse(t, modelBase)
	if err := spec.CheckTokens("agent --base-url {llm_url}", s); err != nil {
		t.Errorf("CheckTokens with an upstream: %v", err)
	}
}
