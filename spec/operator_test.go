package spec

import (
	"strings"
	"testing"
)

func TestOperator(t *testing.T) {
	s, err := Parse("p.yaml", []byte(`
task: t
tools: [{name: save, effect: write}]
agent: {command: "claude -p {task} --output-format json"}
operator:
  resume: claude -p {operator_message} --resume {session_id} --output-format json
  turns: 3
  rules:
    - {when: "session (has )?expired", session: dropped, action: login, reply: "I logged in again; carry on."}
    - {reply: "Please finish the task."}
`))
	if err != nil {
		t.Fatal(err)
	}
	o := s.Operator
	if o == nil || o.Turns != 3 || len(o.Rules) != 2 || o.Rules[0].Action != ActionLogin || o.Rules[0].Session != SessionDropped {
		t.Fatalf("operator %+v", o)
	}
	r := o.Rules[0]
	for _, c := range []struct {
		closing string
		dropped bool
		want    bool
	}{
		{"R-102: FAILED (the portal Session Expired)", true, true},
		{"R-102: FAILED (the portal session expired)", false, false}, // the twin's session is alive
		{"R-102: FAILED (503)", true, false},
	} {
		if got := r.Matches(c.closing, c.dropped); got != c.want {
			t.Errorf("rule 1 on %q (dropped %v): %v, want %v", c.closing, c.dropped, got, c.want)
		}
	}
	if !o.Rules[1].Matches("anything", false) {
		t.Error("a rule without when or session matches every message")
	}
	// The resume tokens reach the shell as variables of their own.
	if TokenVar("operator_message") != "CHAOS_OPERATOR_MESSAGE" || TokenVar("session_id") != "CHAOS_SESSION_ID" {
		t.Errorf("resume token variables: %s %s", TokenVar("operator_message"), TokenVar("session_id"))
	}
	// The default: one turn.
	s, err = Parse("p.yaml", []byte("task: t\ntools: [{name: a}]\nagent: {command: x}\noperator: {resume: 'x {operator_message}', rules: [{reply: go on}]}\n"))
	if err != nil || s.Operator.Turns != 1 {
		t.Errorf("default turns: %v %+v", err, s)
	}
}

func TestOperatorRefused(t *testing.T) {
	const base = "task: t\ntools: [{name: a}]\nagent: {command: x}\n"
	cases := []struct{ yaml, want string }{
		{"operator: {rules: [{reply: r}]}", "operator.resume is required"},
		{"operator: {resume: 'x {operator_mesage}', rules: [{reply: r}]}", "operator.resume: unknown token {operator_mesage} (did you mean {operator_message}?)"},
		{"operator: {resume: 'sh -c \"x {operator_message}\"', rules: [{reply: r}]}", "operator.resume: "},
		{"operator: {resume: x, rules: []}", "operator.rules is empty"},
		{"operator: {resume: x, rules: [{when: '(', reply: r}]}", "when is not a regular expression"},
		{"operator: {resume: x, rules: [{session: gone, reply: r}]}", "session must be dropped or active"},
		{"operator: {resume: x, rules: [{action: logout, reply: r}]}", "action must be login"},
		{"operator: {resume: x, rules: [{when: x}]}", "has no reply"},
		{"operator: {resume: x, turns: 0, rules: [{reply: r}]}", "operator.turns must be from 1 to 20"},
		{"operator: {resume: x, rules: [{reply: r, say: s}]}", `unknown key "say"`},
		{"operator: {resume: x, rules: [{reply: r}]}\nagent: {command: x, runtime: docker, image: alpine}", "agent.runtime docker is not supported"},
		{"operator: {resume: x, rules: [{reply: r}]}\naxes: {session_id: [a]}", "has the name of an operator.resume token"},
		{"agent: {command: 'x {operator_message}'}", "agent.command: unknown token {operator_message}"},
	}
	for _, c := range cases {
		y := base + c.yaml + "\n"
		if strings.Contains(c.yaml, "agent:") {
			y = "task: t\ntools: [{name: a}]\n" + c.yaml + "\n"
		}
		_, err := Parse("p.yaml", []byte(y))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.yaml, err, c.want)
		}
	}
}

// TestTaskUnits: each task of a tasks list may name its units.
func TestTaskUnits(t *testing.T) {
	s, err := Parse("p.yaml", []byte(`
tools: [{name: save, effect: write}]
agent: {command: x}
tasks:
  - {id: first, prompt: p, units: [R-101, R-102], state_checks: [{key: s/R-101, equals: a}, {key: s/R-102, equals: a}]}
  - {id: second, prompt: p, units: [R-201], state_checks: [{key: s/R-201, equals: a}]}
  - {id: third, prompt: p}
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := [][]string{s.Tasks[0].Units, s.Tasks[1].Units, s.Tasks[2].Units}; len(got[0]) != 2 || got[0][1] != "R-102" || len(got[1]) != 1 || got[1][0] != "R-201" || got[2] != nil {
		t.Errorf("units per task: %v", got)
	}
	_, err = Parse("p.yaml", []byte("tools: [{name: a}]\nagent: {command: x}\nunits: [R-1]\ntasks: [{id: a, prompt: p}]\n"))
	if err == nil || !strings.Contains(err.Error(), "with tasks, give each task its units") {
		t.Errorf("units at the top with tasks: %v", err)
	}
}
