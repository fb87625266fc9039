package spec

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// field is one value of a loaded spec and the value it should have.
type field struct {
	name      string
	got, want any
}

func checkFields(t *testing.T, fields []field) {
	t.Helper()
	for _, f := range fields {
		t.Run(f.name, func(t *testing.T) {
			if !reflect.DeepEqual(f.got, f.want) {
				t.Errorf("got  %#v\nwant %#v", f.got, f.want)
			}
		})
	}
}

func schemas(tools []Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, string(t.InputSchema))
	}
	return out
}

func TestLoadExample(t *testing.T) {
	s, err := Load("../examples/support-ticket.yaml")
	if err != nil {
		t.Fatal(err)
	}
	checkFields(t, []field{
		{"name", s.Name, "support-ticket"},
		{"path", s.Path, "../examples/support-ticket.yaml"},
		{"format", s.Format, "chaos"},
		{"tasks", s.Tasks, []Task{{
			ID:     "support-ticket",
			Prompt: "Read the customer's email about ticket T-4821 and set the ticket's priority and team the way the email asks.",
			StateChecks: []StateCheck{
				{Key: "priority", Equals: "urgent", Op: "equals", Line: 55},
				{Key: "team", Equals: "payments", Op: "equals", Line: 56},
			},
		}}},
		{"agent", s.Agent, Agent{
			Command: "{chaos} agent scripted --style {agent} --transport stdio --wall-command {wall} --spec {spec}",
			Timeout: Duration(60 * time.Second),
			Profile: "scripted",
		}},
		{"tool names", []string{s.Tools[0].Name, s.Tools[1].Name, s.Tools[2].Name}, []string{"read_email", "update_ticket", "get_ticket_field"}},
		{"effects", []Effect{s.Tools[0].Effect, s.Tools[1].Effect, s.Tools[2].Effect}, []Effect{EffectNone, EffectWrite, EffectRead}},
		{"schemas", schemas(s.Tools), []string{
			`{"type":"object","properties":{}}`,
			`{"type":"object","properties":{"field":{"type":"string"},"value":{"type":"string"}},"required":["field","value"]}`,
			`{"type":"object","properties":{"field":{"type":"string"}},"required":["field"]}`,
		}},
		{"write reply", s.Tools[1].Reply, `{"status": "updated"}`},
		{"read reply", s.Tools[2].Reply, ""},
		{"initial state", s.InitialState, map[string]any{"priority": "normal", "team": "accounts"}},
		{"faults", s.Faults, []string{"all"}},
		{"conditions", s.Conditions, []ConditionSpec(nil)},
		{"replicates", s.Replicates, 1},
		{"seed", s.Seed, int64(7)},
		{"limits", s.Limits, Limits{MaxCalls: 40, WallClock: Duration(2 * time.Minute), RepeatedFailures: 5, Concurrency: 4}},
		{"claim", s.Claim, ClaimSpec{StatusField: `(?im)^\W*STATUS:\s*(ok|partial|failed)`}},
		{"extra", s.Extra, map[string]string(nil)},
	})
}

func TestLoadAjantik(t *testing.T) {
	s, err := Load("testdata/ajantik-support-ticket.yaml")
	if err != nil {
		t.Fatal(err)
	}
	no := false
	checkFields(t, []field{
		{"name", s.Name, "ajantik-support-ticket"},
		{"format", s.Format, "ajantik"},
		{"tasks", s.Tasks, []Task{
			{
				ID:     "triage",
				Prompt: "Read the customer's email about ticket T-4821 and set its priority and team the way the email asks.",
				StateChecks: []StateCheck{
					{Key: "priority", Equals: "urgent", Op: "equals", Line: 26},
					{Key: "team", Equals: "payments", Op: "equals", Line: 27},
				},
				TextChecks: []TextCheck{
					{Op: "contains", Value: "urgent", Line: 24},
					{Op: "not_regex", Value: "(?i)could not", Line: 24},
				},
			},
			{
				ID:     "reroute",
				Prompt: "Route ticket T-4821 to the shipping team.",
				StateChecks: []StateCheck{
					{Key: "team", Equals: "shipping", Op: "equals", Line: 31},
					{Key: "priority", NotEquals: "low", Op: "not_equals", Line: 32},
				},
			},
		}},
		{"agent", s.Agent, Agent{Profile: "generic"}},
		{"effects", []Effect{s.Tools[0].Effect, s.Tools[1].Effect, s.Tools[2].Effect, s.Tools[3].Effect}, []Effect{EffectNone, EffectWrite, EffectRead, EffectNone}},
		// response maps to reply; a tool without one answers Ajantik's default, a read its value.
		{"replies", []string{s.Tools[1].Reply, s.Tools[2].Reply, s.Tools[3].Reply}, []string{`{"status": "updated"}`, "", `{"status": "ok"}`}},
		{"schemas", schemas(s.Tools), []string{
			`{"type":"object","properties":{}}`,
			`{"type":"object","properties":{"field":{"type":"string"},"value":{"type":"string"}},"required":["field","value"]}`,
			`{"type":"object","properties":{"field":{"type":"string"}},"required":["field"]}`,
			`{"type":"object","properties":{}}`,
		}},
		{"initial state", s.InitialState, map[string]any{"priority": "normal", "team": "accounts"}},
		// The clean fault is the clean condition every run has: it is not a condition here.
		{"conditions", s.Conditions, []ConditionSpec{
			{
				ID: "ticket-503", Family: "transient_error", Tool: "update_ticket", After: 1,
				Reply: `{"error": "unavailable"}`, Message: "503 Service Unavailable", SuccessPossible: &no,
				Description: "The ticket system fails the second write once.", Line: 36,
			},
			{ID: "ticket-phantom", Family: "phantom_success", Tool: "update_ticket", Every: true, Line: 44},
			{ID: "email-replaced", Family: "data_anomaly", Tool: "read_email", Every: true, Reply: `{"ticket":"T-4821","body":"Never mind, all is fine."}`, Line: 45},
		}},
		{"faults", s.Faults, []string{"transient_error", "phantom_success", "session_drop"}},
		{"claim", s.Claim, ClaimSpec{
			StatusField:    `(?im)^\W*STATUS:\s*(ok|partial|failed)`,
			OutputContract: `(?m)^STATUS: (ok|partial|failed)$`,
			FailureWords:   `(?i)\b(failed|could not|unable)\b`,
			SuccessWords:   `(?i)\b(done|updated|set)\b`,
		}},
		{"extra", s.Extra, map[string]string{"skill": "v1", "mcp_server": `["python","-m","ticket_server","--port","0"]`}},
		{"replicates", s.Replicates, 1},
		{"seed", s.Seed, int64(1)},
	})
}

func TestLoadEveryKey(t *testing.T) {
	s, err := Load("testdata/native-every-key.yaml")
	if err != nil {
		t.Fatal(err)
	}
	no := false
	checkFields(t, []field{
		{"text checks", len(s.Tasks[0].TextChecks), 4},
		{"state check ops", []string{s.Tasks[0].StateChecks[0].Op, s.Tasks[0].StateChecks[1].Op, s.Tasks[0].StateChecks[2].Op, s.Tasks[0].StateChecks[3].Op, s.Tasks[0].StateChecks[4].Op},
			[]string{"equals", "not_equals", "contains", "matches", "absent"}},
		{"agent env", s.Agent.Env, map[string]string{"LOG_LEVEL": "debug", "RETRIES": "2"}},
		{"agent profile", s.Agent.Profile, "claude-code"},
		{"merged tool", s.Tools[1], Tool{
			Name: "update_ticket", Description: "Sets one field of the ticket.", Effect: EffectWrite, KeyField: "field", ValueField: "value",
			Reply:       `{"status": "updated"}`,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"field":{"type":"string"},"value":{"type":"string"}},"required":["field","value"]}`),
		}},
		{"schema as written", string(s.Tools[3].InputSchema), `{"type":"object","properties":{"email":{"type":"string","format":"email"}},"required":["email"]}`},
		{"reply mapping", s.Tools[0].Reply, `{"ticket":"T-4821","body":"Urgent: nobody in the EU can pay."}`},
		{"faults", s.Faults, []string{"phantom_success", "stale_read", "data_anomaly"}},
		{"conditions", s.Conditions, []ConditionSpec{
			{ID: "lost-priority", Family: "phantom_success", Tool: "update_ticket", At: 2, Description: "The second write is acknowledged and dropped.", Line: 50},
			{ID: "always-down", Family: "permanent_error", Tool: "set_owner", Every: true, Message: "503 Service Unavailable", SuccessPossible: &no, Line: 55},
			{ID: "cancelled", Family: "data_anomaly", Tool: "read_email", Variant: "cancelled_record", Line: 61},
			{ID: "other-email", Family: "data_anomaly", Tool: "read_email", Reply: `{"ticket":"T-1","body":"all fine"}`, Line: 62},
		}},
		{"replicates", s.Replicates, 3},
		{"seed", s.Seed, int64(42)},
		{"axes", s.Axes, []Axis{{"model", []string{"small", "large"}}, {"case", []string{"eu", "us"}}}},
		{"workspace", s.Workspace, Workspace{Repo: "https://example.com/tickets.git", Ref: "v1.2.0", Files: []string{"fixtures/ticket.json"}, FileLines: []int{81}}},
		{"model", s.Model, ModelSpec{
			Upstream: "https://api.openai.com/v1", Fault: "compound_wrong_entity", Rate: 0.5,
			Steps:       []string{"choose_tool", "update_ticket"},
			StaleValues: map[string][]any{"value": {"normal", "low"}, "count": {float64(3)}},
			Entities:    map[string][]string{"ticket": {"T-1", "T-2"}},
		}},
		{"outcomes", s.Outcomes, Outcomes{
			Failures:  []Outcome{{Name: "wrong_priority", State: &StateCheck{Key: "priority", NotEquals: "urgent", Op: "not_equals", Line: 91}, Failure: true, Line: 91}},
			Successes: []Outcome{{Name: "says_done", Closing: `(?i)\bdone\b`, Line: 93}},
		}},
	})
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load("testdata/nope.yaml")
	var errs *Errors
	if err == nil || errors.As(err, &errs) {
		t.Fatalf("got %v, want a plain error", err)
	}
	if got, want := err.Error(), "open testdata/nope.yaml: no such file or directory"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// base is a small valid spec. Its tools list comes last, so that a case can add a tool
// or a top-level key at line 13.
const base = `name: t
task: triage the ticket
agent: {command: "run {task}"}
state_checks:
  - {key: priority, equals: urgent}
tools:
  - name: read_email
    reply: '{"a": 1}'
  - name: update_ticket
    effect: write
  - name: get_ticket_field
    effect: read
`

// edit is base with old replaced by new.
func edit(old, new string) string {
	if !strings.Contains(base, old) {
		panic("base has no " + old)
	}
	return strings.Replace(base, old, new, 1)
}

func TestParseValid(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		got  func(*Spec) any
		want any
	}{
		{"defaults", base, func(s *Spec) any { return []any{s.Replicates, s.Seed, s.Agent.Profile, s.Tasks[0].ID} }, []any{1, int64(1), "generic", "t"}},
		{"name from the file", edit("name: t\n", ""), func(s *Spec) any { return s.Name }, "spec"},
		{"reply as a mapping is compact JSON in file order", base + "  - {name: list, reply: {z: 1, a: [true, null, 2.5, x]}}\n",
			func(s *Spec) any { return s.Tools[3].Reply }, `{"z":1,"a":[true,null,2.5,"x"]}`},
		{"axes as a mapping keep file order", base + "axes: {model: [b, a], case: [x]}\n",
			func(s *Spec) any { return s.Axes }, []Axis{{"model", []string{"b", "a"}}, {"case", []string{"x"}}}},
		{"axes as a list", base + "axes:\n  - {name: model, values: [a, b]}\n",
			func(s *Spec) any { return s.Axes }, []Axis{{"model", []string{"a", "b"}}}},
		{"axis names are tokens; JSON and ${VAR} are not", edit(`"run {task}"`, `"run {task} {model} '{\"a\":1}' ${HOME}"`) + "axes: {model: [a]}\n",
			func(s *Spec) any { return s.Agent.Command }, `run {task} {model} '{"a":1}' ${HOME}`},
		{"tasks list", strings.Replace(edit("task: triage the ticket\n", "tasks:\n  - {id: one, prompt: do it, checks: [{regex: ok$}]}\n"), "state_checks:\n  - {key: priority, equals: urgent}\n", "", 1),
			func(s *Spec) any { return s.Tasks }, []Task{{ID: "one", Prompt: "do it", TextChecks: []TextCheck{{Op: "regex", Value: "ok$", Line: 3}}}}},
		{"key fixes the schema", base + "  - {name: set_flag, effect: write, key: flag}\n",
			func(s *Spec) any { return string(s.Tools[3].InputSchema) }, `{"type":"object","properties":{"value":{"type":"string"}},"required":["value"]}`},
		{"state values are what JSON gives", edit("equals: urgent", "equals: 3") + "initial_state: {priority: 1, tags: [a]}\n",
			func(s *Spec) any { return []any{s.Tasks[0].StateChecks[0].Equals, s.InitialState} },
			[]any{float64(3), map[string]any{"priority": float64(1), "tags": []any{"a"}}}},
		{"absent", edit("equals: urgent", "absent: true"), func(s *Spec) any { return s.Tasks[0].StateChecks[0] },
			StateCheck{Key: "priority", Absent: true, Op: "absent", Line: 5}},
		{"anchors, merge keys and x- keys", "x-tool: &w {effect: write, key_field: k}\n" + base + "  - {<<: *w, name: set, key_field: f}\n",
			func(s *Spec) any { return s.Tools[3] }, Tool{Name: "set", Effect: EffectWrite, KeyField: "f",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"f":{"type":"string"},"value":{"type":"string"}},"required":["f","value"]}`)}},
		{"conditions", base + "conditions:\n  - {id: lost-write, family: phantom_success, tool: update_ticket, at: 2, every: true, success_possible: false}\n",
			func(s *Spec) any { return s.Conditions[0].At + 10*len(s.Conditions) }, 12},
		{"faults as one name", base + "faults: stale_read\n", func(s *Spec) any { return s.Faults }, []string{"stale_read"}},
		{"a native spec with tasks and an agent is native", strings.Replace(edit("task: triage the ticket\n", "tasks: [{id: a, prompt: b}]\n"), "state_checks:\n  - {key: priority, equals: urgent}\n", "", 1),
			func(s *Spec) any { return s.Format }, "chaos"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse("spec.yaml", []byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if got := tt.got(s); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestParseAnnotations(t *testing.T) {
	s, err := Parse("spec.yaml", []byte(base+"  - {name: list, annotations: {destructiveHint: false, openWorldHint: true}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	yes, no := true, false
	want := &Hints{Destructive: &no, OpenWorld: &yes}
	if got := s.Tools[len(s.Tools)-1].Hints; !reflect.DeepEqual(got, want) {
		t.Errorf("hints %+v, want %+v", got, want)
	}
	if s.Tools[0].Hints != nil {
		t.Errorf("a tool without annotations: hints %+v, want none", s.Tools[0].Hints)
	}
}

func TestParseProblems(t *testing.T) {
	families := "phantom_success, phantom_failure, transient_error, permanent_error, session_drop, truncated_reply, premature_read, stale_read, data_anomaly, context_switch, empty_success"
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		// Keys.
		{"unknown key", base + "replicats: 3\n",
			[]string{`spec.yaml:13: unknown key "replicats" (did you mean replicates?)`}},
		{"unknown key, nothing close", base + "gremlins: 3\n",
			[]string{`spec.yaml:13: unknown key "gremlins" (known: ` + strings.Join(nativeKeys, ", ") + `)`}},
		{"key in the wrong place", base + "status_field: x\n",
			[]string{`spec.yaml:13: unknown key "status_field" (did you mean claim.status_field?)`}},
		{"unknown key in a section", base + "limits: {max_call: 3}\n",
			[]string{`spec.yaml:13: unknown key "max_call" in limits (did you mean max_calls?)`}},
		{"unknown key in a tool", base + "  - {name: list, response: x}\n",
			[]string{`spec.yaml:13: unknown key "response" in tool "list" (did you mean reply?)`}},
		{"unknown key in agent", edit(`{command: "run {task}"}`, `{command: "run {task}", timout: 5s}`),
			[]string{`spec.yaml:3: unknown key "timout" in agent (did you mean timeout?)`}},
		{"unknown server transport", base + "servers:\n  - {name: crm, url: \"https://h/sse\", transport: SSE}\n",
			[]string{`spec.yaml:14: server "crm": unknown transport "SSE" (did you mean sse?)`}},
		{"annotation not a boolean", base + "  - {name: list, annotations: {readOnlyHint: yes please}}\n",
			[]string{`spec.yaml:13: tool "list": annotations: readOnlyHint must be true or false, got "yes please"`}},
		{"unknown annotation", base + "  - {name: list, annotations: {read_only: true}}\n",
			[]string{`spec.yaml:13: unknown key "read_only" in tool "list": annotations (did you mean readOnlyHint?)`}},
		{"annotations not a mapping", base + "  - {name: list, annotations: [readOnlyHint]}\n",
			[]string{`spec.yaml:13: tool "list": annotations must be a mapping of readOnlyHint, destructiveHint, idempotentHint, openWorldHint to true or false, got a list`}},
		{"key given twice", base + "name: u\n",
			[]string{`spec.yaml:13: key "name" given twice (first at line 1)`}},

		// Types.
		{"replicates not a number", base + "replicates: three\n",
			[]string{`spec.yaml:13: replicates must be a whole number, got "three"`}},
		{"replicates below 1", base + "replicates: 0\n",
			[]string{`spec.yaml:13: replicates must be at least 1, got 0`}},
		{"seed not a number", base + "seed: 1.5\n",
			[]string{`spec.yaml:13: seed must be a whole number, got "1.5"`}},
		{"duration", base + "limits: {wall_clock: ninety}\n",
			[]string{`spec.yaml:13: limits.wall_clock must be a duration such as "90s" or "5m", got "ninety"`}},
		{"duration without a unit", edit(`{command: "run {task}"}`, `{command: "run {task}", timeout: 90}`),
			[]string{`spec.yaml:3: agent.timeout must be a duration such as "90s" or "5m", got "90"`}},
		{"negative count", base + "limits: {max_calls: -1}\n",
			[]string{`spec.yaml:13: limits.max_calls must be 0 or more, got -1`}},
		{"effect", base + "  - {name: list, effect: writes}\n",
			[]string{`spec.yaml:13: tool "list": effect must be none, read or write, got "writes"`}},
		{"section not a mapping", base + "limits: [1]\n",
			[]string{`spec.yaml:13: limits must be a mapping, got a list`}},
		{"profile", edit(`{command: "run {task}"}`, `{command: "run {task}", profile: claud-code}`),
			[]string{`spec.yaml:3: unknown agent.profile "claud-code" (did you mean claude-code?)`}},

		// Faults and conditions.
		{"unknown fault family", base + "faults: [phantom_sucess]\n",
			[]string{`spec.yaml:13: unknown fault family "phantom_sucess" (did you mean phantom_success?)`}},
		{"unknown fault family, nothing close", base + "faults: [gremlins]\n",
			[]string{`spec.yaml:13: unknown fault family "gremlins" (known: ` + families + `, all)`}},
		{"all with others", base + "faults: [all, stale_read]\n",
			[]string{`spec.yaml:13: faults: all already holds every family; list all alone or name the families`}},
		{"family that applies to no tool", edit("    effect: read\n", "") + "faults: [stale_read]\n",
			[]string{`spec.yaml:12: fault family "stale_read" applies to no tool: it needs a tool with effect: read`}},
		{"condition family", base + "conditions:\n  - {id: x, family: phantom_sucess, tool: update_ticket}\n",
			[]string{`spec.yaml:14: condition "x": unknown fault family "phantom_sucess" (did you mean phantom_success?)`}},
		{"condition without family", base + "conditions:\n  - {id: x, tool: update_ticket}\n",
			[]string{`spec.yaml:14: condition "x": family is required (one of ` + families + `)`}},
		{"condition on an unknown tool", base + "conditions:\n  - {id: x, family: transient_error, tool: update_tiket}\n",
			[]string{`spec.yaml:14: condition "x": unknown tool "update_tiket" (did you mean update_ticket?)`}},
		{"condition without a tool", base + "conditions:\n  - {id: x, family: transient_error}\n",
			[]string{`spec.yaml:14: condition "x": tool is required (one of read_email, update_ticket, get_ticket_field)`}},
		{"phantom on a read", base + "conditions:\n  - {id: x, family: phantom_success, tool: get_ticket_field}\n",
			[]string{`spec.yaml:14: condition "x": phantom_success needs a tool that writes; "get_ticket_field" has effect: read`}},
		{"session drop on a source", base + "conditions:\n  - {id: x, family: session_drop, tool: read_email}\n",
			[]string{`spec.yaml:14: condition "x": session_drop needs a tool that writes; "read_email" has effect: none`}},
		{"stale read on a write", base + "conditions:\n  - {id: x, family: stale_read, tool: update_ticket}\n",
			[]string{`spec.yaml:14: condition "x": stale_read needs a tool that reads; "update_ticket" has effect: write`}},
		{"anomaly variant", base + "conditions:\n  - {id: x, family: data_anomaly, tool: read_email, variant: mixed_unit}\n",
			[]string{`spec.yaml:14: condition "x": unknown data_anomaly variant "mixed_unit" (did you mean mixed_units?)`}},
		{"variant on another family", base + "conditions:\n  - {id: x, family: transient_error, tool: read_email, variant: mixed_units}\n",
			[]string{`spec.yaml:14: condition "x": variant applies only to data_anomaly, not transient_error`}},
		{"duplicate condition ids", base + "conditions:\n  - {id: x, family: transient_error, tool: read_email}\n  - {id: x, family: permanent_error, tool: read_email}\n",
			[]string{`spec.yaml:15: condition "x" is defined twice (first at line 14)`}},
		{"condition without id", base + "conditions:\n  - {family: transient_error, tool: read_email}\n",
			[]string{`spec.yaml:14: condition #1 has no id`}},
		{"condition called clean", base + "conditions:\n  - {id: clean, family: transient_error, tool: read_email}\n",
			[]string{`spec.yaml:14: condition id "clean" is taken by the condition without a fault; choose another`}},
		{"ajantik word in a condition", base + "conditions:\n  - {id: x, kind: error_first, tool: read_email}\n",
			[]string{
				`spec.yaml:14: unknown key "kind" in condition "x" (did you mean family?)`,
				`spec.yaml:14: condition "x": family is required (one of ` + families + `)`,
			}},

		// Tools.
		{"duplicate tool", base + "  - name: update_ticket\n",
			[]string{`spec.yaml:13: tool "update_ticket" is defined twice (first at line 9)`}},
		{"tool without name", base + "  - {description: lists things}\n",
			[]string{`spec.yaml:13: tool #4 has no name`}},
		{"tool name", base + "  - {name: list teams}\n",
			[]string{`spec.yaml:13: tool name "list teams" may only hold letters, digits, _, - and .`}},
		{"no tools", edit("tools:\n", "x-tools:\n"),
			[]string{`spec.yaml:1: tools is required: a spec needs at least one tool`}},
		{"empty tools", strings.Split(base, "tools:")[0] + "tools: []\n",
			[]string{`spec.yaml:6: tools is empty: a spec needs at least one tool`}},
		{"schema not an object", base + "  - {name: list, input_schema: {type: array}}\n",
			[]string{`spec.yaml:13: tool "list": input_schema must be an object schema (type: object), got type: array`}},
		{"schema without type", base + "  - {name: list, input_schema: {properties: {}}}\n",
			[]string{`spec.yaml:13: tool "list": input_schema must be an object schema (type: object), got type: nothing`}},
		{"schema a list", base + "  - {name: list, input_schema: [a]}\n",
			[]string{`spec.yaml:13: tool "list": input_schema must be an object schema (a mapping with type: object), got a list`}},
		{"schema without the key argument", base + "  - {name: set, effect: write, input_schema: {type: object, properties: {value: {}}}}\n",
			[]string{`spec.yaml:13: tool "set": input_schema has no property "field" (the tool's key_field)`}},
		{"reply JSON cannot hold", base + "  - {name: list, reply: {n: .inf}}\n",
			[]string{`spec.yaml:13: tool "list": reply: ".inf" is not a number JSON can hold`}},

		// The agent command.
		{"unknown token", edit(`"run {task}"`, `"run {tsk} '{\"a\":1}' ${HOME}"`),
			[]string{`spec.yaml:3: agent.command: unknown token {tsk} (did you mean {task}?)`}},
		{"unknown token, nothing close", edit(`"run {task}"`, `"run {model}"`),
			[]string{`spec.yaml:3: agent.command: unknown token {model} (known: {task}, {wall}, {mcp_config}, {codex_config}, {wall_url}, {llm_url}, {sandbox}, {spec}, {chaos}, {shim_path}, {cdp_url})`}},
		{"unknown token on a later line of a block", edit(`agent: {command: "run {task}"}`, "agent:\n  command: |\n    run\n    {wal}"),
			[]string{`spec.yaml:6: agent.command: unknown token {wal} (did you mean {wall}?)`}},
		{"axis named like a token", base + "axes: {task: [a]}\n",
			[]string{`spec.yaml:13: axis name "task" is taken by the token {task}; choose another`}},
		{"axis without values", base + "axes: {model: []}\n",
			[]string{`spec.yaml:13: axis "model" has no values`}},

		// Checks.
		{"task missing", edit("task: triage the ticket\n", ""),
			[]string{`spec.yaml:1: task is required: what the agent is asked to do`}},
		{"task and tasks", base + "tasks: [{id: a, prompt: b}]\n",
			[]string{`spec.yaml:13: give either task or tasks, not both`}},
		{"state checks at the top with tasks", edit("task: triage the ticket\n", "tasks: [{id: a, prompt: b}]\n"),
			[]string{`spec.yaml:4: state_checks at the top goes with task; with tasks, give each task its state_checks`}},
		{"task id twice", strings.Replace(edit("task: triage the ticket\n", "tasks: [{id: a, prompt: b}, {id: a, prompt: c}]\n"), "state_checks:\n  - {key: priority, equals: urgent}\n", "", 1),
			[]string{`spec.yaml:2: task "a" is defined twice (first at line 2)`}},
		{"state check without key", edit("{key: priority, equals: urgent}", "{equals: urgent}"),
			[]string{`spec.yaml:5: state check without a key`}},
		{"state check without comparison", edit("{key: priority, equals: urgent}", "{key: priority}"),
			[]string{`spec.yaml:5: state check on "priority" needs one of equals, not_equals, contains, matches, absent`}},
		{"state check with two comparisons", edit("{key: priority, equals: urgent}", "{key: priority, equals: urgent, contains: urg}"),
			[]string{`spec.yaml:5: state check on "priority" has several comparisons (equals, contains); keep one`}},
		{"state check regexp", edit("{key: priority, equals: urgent}", `{key: priority, matches: "(urgent"}`),
			[]string{"spec.yaml:5: state check on \"priority\": matches: error parsing regexp: missing closing ): `(urgent`"}},
		{"absent false", edit("{key: priority, equals: urgent}", "{key: priority, absent: false}"),
			[]string{`spec.yaml:5: state check on "priority": absent takes only true (to check a key is set, use matches: ".")`}},
		{"unknown comparison", edit("{key: priority, equals: urgent}", "{key: priority, equal: urgent}"),
			[]string{
				`spec.yaml:5: unknown key "equal" in state check on "priority" (did you mean equals?)`,
				`spec.yaml:5: state check on "priority" needs one of equals, not_equals, contains, matches, absent`,
			}},
		{"claim regexp", base + "claim: {failure_words: \"(fail\"}\n",
			[]string{"spec.yaml:13: claim.failure_words: error parsing regexp: missing closing ): `(fail`"}},
		{"status field without a group", base + "claim: {status_field: \"STATUS: ok\"}\n",
			[]string{`spec.yaml:13: claim.status_field needs a group that captures the status, such as (ok|partial|failed)`}},
		{"workspace ref without repo", base + "workspace: {ref: main}\n",
			[]string{`spec.yaml:13: workspace.ref needs workspace.repo`}},

		// YAML itself.
		{"syntax error", base + "seed: [1, 2\n",
			[]string{`spec.yaml:13: did not find expected ',' or ']'`}},
		{"tab", base + "seed:\n\t- 1\n",
			[]string{`spec.yaml:14: a tab in the indentation: YAML indents with spaces only; replace the tab with spaces (found character that cannot start any token)`}},
		// yaml.v3 gives the line where the enclosing value starts; the tab is a line on.
		{"tab after a value", base + "\t- name: x\n",
			[]string{`spec.yaml:13: a tab in the indentation: YAML indents with spaces only; replace the tab with spaces (found a tab character that violates indentation)`}},
		{"empty file", "", []string{`spec.yaml: the file is empty`}},
		{"not a mapping", "- a\n", []string{`spec.yaml:1: a spec must be a mapping of keys (name:, task:, tools: ...), got a list`}},
		{"two documents", base + "---\nname: u\n", []string{`spec.yaml:13: a spec file holds one YAML document; remove the second (after ---)`}},
		{"alias to itself", base + "initial_state: &s {a: *s}\n", []string{`spec.yaml:13: initial_state: alias *s refers to a value that holds it`}},

		// Ajantik files.
		{"ajantik unknown kind", "skill: v1\ntasks: [{id: a, prompt: b}]\ntools: [{name: t, effect: write}]\nfaults:\n  - {id: f, kind: eror_first, tool: t}\n",
			[]string{`spec.yaml:5: fault "f": unknown fault kind "eror_first" (did you mean error_first?)`}},
		{"ajantik reply", "skill: v1\ntasks: [{id: a, prompt: b}]\ntools:\n  - {name: t, reply: ok}\n",
			[]string{`spec.yaml:4: unknown key "reply" in tool "t" (did you mean response?)`}},
		{"ajantik module", "tasks: [{id: a, prompt: b}]\ntools: [{name: t, effect: write}]\nauto_faults: [phantom-succes]\n",
			[]string{`spec.yaml:3: unknown fault module "phantom-succes" (did you mean phantom_success?)`}},
		{"ajantik phantom on a source", "tasks: [{id: a, prompt: b}]\ntools: [{name: t}]\nfaults:\n  - {id: f, kind: phantom_first, tool: t}\n",
			[]string{`spec.yaml:4: fault "f": phantom_success needs a tool that writes; "t" has effect: none`}},
		{"ajantik without tasks", "skill: v1\ntools: [{name: t}]\n",
			[]string{`spec.yaml:1: tasks is required: what the agent is asked to do`}},
		{"ajantik task without prompt", "tasks: [{id: a}]\ntools: [{name: t}]\n",
			[]string{`spec.yaml:1: task "a" has no prompt`}},
		{"ajantik text check", "tasks: [{id: a, prompt: b, checks: [{contain: x}]}]\ntools: [{name: t}]\n",
			[]string{
				`spec.yaml:1: unknown key "contain" in check (did you mean contains?)`,
				`spec.yaml:1: check needs one of contains, not_contains, regex, not_regex`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertProblems(t, tt.yaml, tt.want)
		})
	}
}

// TestParseAllProblems: one run shows every mistake in the file, in line order.
func TestParseAllProblems(t *testing.T) {
	yaml := `name: t
task: triage
agent: {command: "run {tsk}", timeout: soon}
state_checks:
  - {key: priority}
tools:
  - name: read_email
  - name: update_ticket
    effect: writ
  - name: read_email
faults: [phantom_sucess]
replicats: 2
seed: x
conditions:
  - {id: c, family: stale_read, tool: update_tiket}
`
	assertProblems(t, yaml, []string{
		`spec.yaml:3: agent.timeout must be a duration such as "90s" or "5m", got "soon"`,
		`spec.yaml:3: agent.command: unknown token {tsk} (did you mean {task}?)`,
		`spec.yaml:5: state check on "priority" needs one of equals, not_equals, contains, matches, absent`,
		`spec.yaml:9: tool "update_ticket": effect must be none, read or write, got "writ"`,
		`spec.yaml:10: tool "read_email" is defined twice (first at line 7)`,
		`spec.yaml:11: unknown fault family "phantom_sucess" (did you mean phantom_success?)`,
		`spec.yaml:12: unknown key "replicats" (did you mean replicates?)`,
		`spec.yaml:13: seed must be a whole number, got "x"`,
		`spec.yaml:15: condition "c": unknown tool "update_tiket" (did you mean update_ticket?)`,
	})
}

func assertProblems(t *testing.T, yaml string, want []string) {
	t.Helper()
	s, err := Parse("spec.yaml", []byte(yaml))
	var errs *Errors
	if !errors.As(err, &errs) {
		t.Fatalf("got spec %+v and error %v, want *Errors", s, err)
	}
	if s != nil {
		t.Errorf("got a spec with the errors")
	}
	got := strings.Split(errs.Error(), "\n")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
	if len(errs.Problems) != len(want) {
		t.Errorf("got %d problems, want %d", len(errs.Problems), len(want))
	}
}
