// Package spec holds the experiment spec: its types, loading it from YAML with
// line-numbered errors, and planning a run (cells x conditions x replicates, seeds).
//
// A spec describes a simulated world the way Ajantik's scenario files do: a flat
// key/value state, tools that read it, write it or answer a fixed reply, and state
// checks on the final state. Ajantik's files load as they are (see ajantik.go).
package spec

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"
)

// Effect says what a tool does to the simulated world.
type Effect string

const (
	// EffectNone: the tool answers its fixed reply (a source: an email, an order list).
	EffectNone Effect = "none"
	// EffectRead: the tool answers the value stored under its key (a read-back).
	EffectRead Effect = "read"
	// EffectWrite: the tool stores its value argument under its key.
	EffectWrite Effect = "write"
)

// Spec is one experiment: what the agent is asked, how it is started, the world
// it works in, the faults to inject and how the result is checked.
type Spec struct {
	// Name identifies the experiment in run folders and history (defaults to the file name).
	Name string `json:"name"`
	// Path is the file the spec was loaded from (not part of the YAML).
	Path string `json:"path,omitempty"`
	// Format is "chaos" for a native spec, "ajantik" for an Ajantik scenario file.
	Format string `json:"format"`

	Tasks []Task `json:"tasks"`
	Agent Agent  `json:"agent"`
	Tools []Tool `json:"tools"`
	// Servers are real MCP servers behind the wall; their tools join Tools when the run is
	// planned (upstream.Discover).
	Servers []Server `json:"servers,omitempty"`
	// Scripts are the project's scripts answered by the twin behind the shim
	// (spec/scripts.go); each but a `real: true` one is also in Tools.
	Scripts      []Script       `json:"scripts,omitempty"`
	InitialState map[string]any `json:"initial_state,omitempty"`
	// Faults lists the tool fault families to generate (empty or ["all"]: every family that applies).
	Faults []string `json:"faults,omitempty"`
	// FaultSet is which generated conditions to keep: "" (chaos's whole set) or "ajantik"
	// (only those Ajantik's auto_faults would generate, for someone comparing with it).
	FaultSet string `json:"fault_set,omitempty"`
	// Conditions are conditions written by hand (Ajantik's `faults:` list), besides the generated ones.
	Conditions []ConditionSpec `json:"conditions,omitempty"`
	// Only are the condition ids a run plans (empty: every condition), as `chaos run
	// --only` takes them; --only overrides it. chaos skill test writes its plan here.
	Only []string `json:"only,omitempty"`

	Replicates int       `json:"replicates"`
	Seed       int64     `json:"seed"`
	Axes       []Axis    `json:"axes,omitempty"`
	Limits     Limits    `json:"limits"`
	Claim      ClaimSpec `json:"claim"`
	Workspace  Workspace `json:"workspace"`
	// Model is the model chaos table: the proxy's upstream and the model fault. It is
	// not part of the spec's Identity.
	Model ModelSpec `json:"model,omitzero"`
	// Outcomes are named outcomes declared besides the built-in verdicts.
	Outcomes Outcomes `json:"outcomes,omitzero"`
	// Browser is a Chromium behind the CDP guard, reached through {cdp_url} (spec/browser.go).
	Browser *Browser `json:"browser,omitempty"`
	// Operator is a scripted person who answers the agent when it ends (spec/operator.go).
	Operator *Operator `json:"operator,omitempty"`
	// Extra holds keys that are accepted but not used yet: Ajantik's skill and mcp_server
	// (the latter as JSON).
	Extra map[string]string `json:"-"`
}

// Task is one thing the agent is asked to do, with the checks that say it was done.
// A native spec has one (`task:` and `state_checks:` at the top); Ajantik files may have several.
type Task struct {
	ID          string       `json:"id"`
	Prompt      string       `json:"prompt"`
	StateChecks []StateCheck `json:"state_checks,omitempty"`
	// TextChecks are checks of the agent's closing message (Ajantik's `checks:`).
	TextChecks []TextCheck `json:"text_checks,omitempty"`
	// Probes are checks of the real world after the trial (mcp probes, command checks).
	Probes []Probe `json:"probes,omitempty"`
	// Units are the task's units (records, files), each judged on its own: its state
	// checks are those whose key holds its name, its claim the closing message's
	// `UNIT: VERIFIED` or `UNIT: FAILED` line (trial/units.go).
	Units []string `json:"units,omitempty"`
}

// TextCheck is a check of the agent's closing message.
type TextCheck struct {
	// Op is contains, not_contains, regex or not_regex.
	Op    string `json:"op"`
	Value string `json:"value"`
	// Line is where the check was written, for messages.
	Line int `json:"-"`
}

// CommandTokens are the tokens agent.command may hold besides the names of the axes.
var CommandTokens = []string{"task", "wall", "mcp_config", "codex_config", "wall_url", "llm_url", "sandbox", "spec", "chaos", "shim_path", "cdp_url"}

// Profiles name the ways an agent's closing message is read.
var Profiles = []string{"generic", "claude-code", "codex", "goose", "scripted"}

// Agent is how the agent under test is started.
type Agent struct {
	// Command is a template; tokens {task} {wall} {mcp_config} {wall_url} {llm_url} {sandbox} {spec}
	// and the names of the spec's axes are filled in per trial.
	Command string            `json:"command,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Timeout Duration          `json:"timeout,omitempty"`
	// Profile names how the closing message is read: generic, claude-code, codex, goose, scripted.
	Profile string `json:"profile,omitempty"`
	// Runtime is how the agent is started: "" (a process, the default: RuntimeName) or
	// "docker" (in Container; spec/runtime.go).
	Runtime   string    `json:"runtime,omitempty"`
	Container Container `json:"container,omitzero"`
	// EnvLines are the lines of agent.env's keys, for messages.
	EnvLines map[string]int `json:"-"`
}

// EnvError is an agent.env value whose ${VAR}s cannot be filled in; Line is its key's line
// in the spec (0 when not known).
type EnvError struct {
	Key  string
	Line int
	Err  error
}

func (e *EnvError) Error() string { return fmt.Sprintf("agent.env %s: %v", e.Key, e.Err) }
func (e *EnvError) Unwrap() error { return e.Err }

// ExpandEnv is agent.env with the ${VAR}s of its values replaced from lookup
// (os.LookupEnv when nil): an API key is written `OPENAI_API_KEY: ${OPENAI_API_KEY}` and
// stays out of the spec, its copies and Temporal's history; only the process that starts
// the agent reads it. A variable that is not set is an error naming the key and the
// variable, never an empty value.
func (a Agent) ExpandEnv(lookup func(string) (string, bool)) (map[string]string, error) {
	if len(a.Env) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(a.Env))
	keys := make([]string, 0, len(a.Env))
	for k := range a.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, err := ExpandSecrets(a.Env[k], lookup)
		if err != nil {
			return nil, &EnvError{Key: k, Line: a.EnvLines[k], Err: err}
		}
		out[k] = v
	}
	return out, nil
}

// Tool is one simulated tool.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	Effect      Effect          `json:"effect"`
	// KeyField is the argument that names the state key (default "field").
	KeyField string `json:"key_field,omitempty"`
	// ValueField is the argument a write stores, and the field a read answers with (default "value").
	ValueField string `json:"value_field,omitempty"`
	// Key fixes the state key for a tool that always touches the same one (then KeyField is not read).
	Key string `json:"key,omitempty"`
	// Reply is the tool's answer: the fixed reply of a source, the acknowledgement of a write.
	// A read answers {KeyField: key, ValueField: value} unless Reply is set.
	Reply string `json:"reply,omitempty"`
	// Server names the real server the tool is served from ("" for a simulated tool);
	// Remote is the tool's name on that server (it differs where names collide).
	Server string `json:"server,omitempty"`
	Remote string `json:"remote,omitempty"`
	// Annotations are the MCP tool annotations a real server gives the tool (readOnlyHint,
	// destructiveHint, title, ...), passed on to the agent as they are; none for a
	// simulated tool.
	Annotations json.RawMessage `json:"annotations,omitempty"`
	// Hints are the MCP tool annotations the spec writes (`annotations:`), which win
	// over those derived from the effect (world.Annotations) and a real server's.
	Hints *Hints `json:"hints,omitempty"`
}

// Hints are MCP tool annotations: what a client may assume of a tool before calling it.
// Clients gate on them (Codex asks for approval of a tool not read-only), so the wall
// gives every tool a set (world.Annotations). A nil field is not set.
type Hints struct {
	ReadOnly    *bool `json:"readOnlyHint,omitempty"`
	Destructive *bool `json:"destructiveHint,omitempty"`
	Idempotent  *bool `json:"idempotentHint,omitempty"`
	OpenWorld   *bool `json:"openWorldHint,omitempty"`
}

// StateCheck is a check of the final world: the value stored under Key.
// Exactly one of the comparisons is set.
type StateCheck struct {
	Key       string `json:"key"`
	Equals    any    `json:"equals,omitempty"`
	NotEquals any    `json:"not_equals,omitempty"`
	Contains  string `json:"contains,omitempty"`
	Matches   string `json:"matches,omitempty"`
	Absent    bool   `json:"absent,omitempty"`
	// Op is the comparison that was given: equals, not_equals, contains, matches, absent.
	Op string `json:"op"`
	// Line is where the check was written, for messages.
	Line int `json:"-"`
}

// ConditionSpec is a condition written by hand in the spec.
type ConditionSpec struct {
	ID      string `json:"id"`
	Family  string `json:"family,omitempty"`
	Tool    string `json:"tool,omitempty"`
	Variant string `json:"variant,omitempty"`
	// At is the call to the tool that is hit (1 = the first; 0 = default for the family).
	At int `json:"at,omitempty"`
	// Every: every call from At on is hit (Ajantik's *_always kinds).
	Every bool `json:"every,omitempty"`
	// After is Ajantik's `after`, kept as written; native conditions use At.
	After int `json:"after,omitempty"`
	// Reply replaces the tool's reply (Ajantik's "replace" kind).
	Reply string `json:"reply,omitempty"`
	// Message is the error text an error fault answers with.
	Message         string `json:"message,omitempty"`
	SuccessPossible *bool  `json:"success_possible,omitempty"`
	Description     string `json:"description,omitempty"`
	Line            int    `json:"-"`
}

// Axis is a categorical axis; a run covers every combination of axis values (cells).
type Axis struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

// Limits bound a trial; crossing one aborts it.
type Limits struct {
	// MaxCalls is the most tool calls a trial may make (0: no limit).
	MaxCalls int `json:"max_calls,omitempty"`
	// WallClock is the longest a trial may take (0: the agent timeout only).
	WallClock Duration `json:"wall_clock,omitempty"`
	// RepeatedFailures is how many identical failing calls in a row abort the trial (0: no limit).
	RepeatedFailures int `json:"repeated_failures,omitempty"`
	// Concurrency is how many trials run at once (0: the default of the runner).
	Concurrency int `json:"concurrency,omitempty"`
	// MaxCostUSD is the most a trial may spend on its model calls, as the model proxy
	// prices them (0: no limit); the watcher aborts the trial when it is crossed.
	MaxCostUSD float64 `json:"max_cost_usd,omitempty"`
}

// ClaimSpec says how to read the agent's claim from its closing message.
type ClaimSpec struct {
	// StatusField is a regex whose first group captures a machine-read status (ok|partial|failed).
	StatusField string `json:"status_field,omitempty"`
	// OutputContract is a regex of the line a machine consumer reads.
	OutputContract string `json:"output_contract,omitempty"`
	FailureWords   string `json:"failure_words,omitempty"`
	SuccessWords   string `json:"success_words,omitempty"`
}

// Workspace is what a trial's working directory starts with.
type Workspace struct {
	// Repo is a git repository (a path or URL) checked out into the workspace at Ref.
	Repo string `json:"repo,omitempty"`
	Ref  string `json:"ref,omitempty"`
	// Files are paths inside the spec's folder, copied to the same paths in the sandbox.
	Files []string `json:"files,omitempty"`
	// FileLines are where each of Files was written, for messages.
	FileLines []int `json:"-"`
}

// Duration is a time.Duration written as "90s" or "5m" in YAML and JSON.
type Duration time.Duration

func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes the duration as a string such as "1m30s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads a duration written as a string or as nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		*d = Duration(v)
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	*d = Duration(n)
	return nil
}

// ToolByName returns the tool with that name, or false.
func (s *Spec) ToolByName(name string) (Tool, bool) {
	for _, t := range s.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// StateKey is the state key a call to t touches, from its arguments.
func (t Tool) StateKey(args map[string]any) (string, bool) {
	if t.Key != "" {
		return t.Key, true
	}
	v, ok := args[t.KeyFieldName()]
	if !ok {
		return "", false
	}
	s, ok := v.(string)
	if !ok {
		b, _ := json.Marshal(v)
		s = string(b)
	}
	return s, true
}

// KeyFieldName is the argument that names the state key.
func (t Tool) KeyFieldName() string {
	if t.KeyField == "" {
		return "field"
	}
	return t.KeyField
}

// ValueFieldName is the argument a write stores.
func (t Tool) ValueFieldName() string {
	if t.ValueField == "" {
		return "value"
	}
	return t.ValueField
}

// AllStateChecks is every state check of every task.
func (s *Spec) AllStateChecks() []StateCheck {
	var out []StateCheck
	for _, t := range s.Tasks {
		out = append(out, t.StateChecks...)
	}
	return out
}
