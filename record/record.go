// Package record is the trial's log: JSONL, one row per event, written as it happens
// and closed with a session_end row that holds the final state of the world.
//
// There is one writer (Writer) and one reader (Read); everything downstream (verdicts,
// the report, the store) reads records through Read.
package record

import (
	"encoding/json"
	"time"
)

// Row types.
const (
	TypeSessionStart = "session_start"
	TypeCall         = "call"
	TypeRejected     = "rejected"
	TypeError        = "error"
	TypeSessionEnd   = "session_end"
	// TypeOutside is a change the agent made outside its sandbox (proxies/shim).
	TypeOutside = "outside"
	// TypeOperator is a turn of the scripted operator (spec operator:): what the agent
	// said when it ended, what the operator answered and did.
	TypeOperator = "operator"
)

// Row is one line of a record. Which fields are set depends on Type.
type Row struct {
	Type string    `json:"type"`
	Seq  int       `json:"seq"`
	Time time.Time `json:"time"`

	// session_start
	Trial     string   `json:"trial,omitempty"`
	Condition string   `json:"condition,omitempty"`
	Fault     *Fault   `json:"fault,omitempty"`
	Tools     []string `json:"tools,omitempty"`
	// Writes are the tools that write, with real servers behind the wall (so the record
	// alone can tell a swallowed write).
	Writes          []string       `json:"writes,omitempty"`
	InitialState    map[string]any `json:"initial_state,omitempty"`
	SuccessPossible *bool          `json:"success_possible,omitempty"`
	Seed            int64          `json:"seed,omitempty"`

	// call and rejected
	Transport string          `json:"transport,omitempty"`
	Tool      string          `json:"tool,omitempty"`
	Args      json.RawMessage `json:"args,omitempty"`
	// Hit says whether and how the armed fault fired on this call.
	Hit *Hit `json:"hit,omitempty"`
	// Reply is what the agent received; IsError marks a tool failure, Status its HTTP-like code.
	Reply   string `json:"reply,omitempty"`
	IsError bool   `json:"is_error,omitempty"`
	Status  int    `json:"status,omitempty"`
	// Structured is the structured content the agent received, from a real server.
	Structured json.RawMessage `json:"structured,omitempty"`
	// RealReply is what the tool really answered, where the agent got something else.
	RealReply string `json:"real_reply,omitempty"`
	// State is the world after the call.
	State map[string]any `json:"state,omitempty"`
	// Argv, Exit, Stdout and Stderr are a shimmed command (transport "shim"): the
	// command line the agent ran and what it got back.
	Argv   []string `json:"argv,omitempty"`
	Exit   *int     `json:"exit,omitempty"`
	Stdout string   `json:"stdout,omitempty"`
	Stderr string   `json:"stderr,omitempty"`
	// Usage is what a model call used, as its response declared it (model calls only).
	Usage *Usage `json:"usage,omitempty"`

	// rejected, error and session_end
	Reason string `json:"reason,omitempty"`

	// operator
	Operator *Operator `json:"operator,omitempty"`

	// session_end
	FinalState map[string]any `json:"final_state,omitempty"`
	Calls      int            `json:"calls,omitempty"`
	Fired      int            `json:"fired,omitempty"`
}

// Operator is one turn of the scripted operator: the agent ended, a rule matched what it
// said (or the twin's state), and the operator answered; the agent was then resumed with
// the answer, unless Error says why it was not.
type Operator struct {
	// Turn is the operator's n-th answer (1-based); Rule the matching rule (1-based).
	Turn int `json:"turn"`
	Rule int `json:"rule"`
	// Asked is the agent's closing message the rule was matched against.
	Asked string `json:"asked"`
	// Said is the operator's reply, the message the agent was resumed with.
	Said string `json:"said"`
	// Action is what the operator did on the twin before answering ("login"), and
	// Done what came of it ("the dropped session was revived", "the session was not dropped").
	Action string `json:"action,omitempty"`
	Done   string `json:"done,omitempty"`
	// SessionID is the agent's session the reply resumed ("" when the resume needs none).
	SessionID string `json:"session_id,omitempty"`
	// Error says why the agent was not resumed (no session id in its output, no time left).
	Error string `json:"error,omitempty"`
}

// Fault is the armed condition, as the session_start row describes it.
type Fault struct {
	Condition string `json:"condition"`
	Family    string `json:"family,omitempty"`
	Variant   string `json:"variant,omitempty"`
	Tool      string `json:"tool,omitempty"`
	// What is one line on what the fault does.
	What string `json:"what,omitempty"`
}

// Usage is the tokens a model call's response declared and, where the model has a
// price, their money (cost.Price).
type Usage struct {
	Model      string   `json:"model,omitempty"`
	Input      int64    `json:"input_tokens"`
	Output     int64    `json:"output_tokens"`
	CacheRead  int64    `json:"cache_read_tokens,omitempty"`
	CacheWrite int64    `json:"cache_write_tokens,omitempty"`
	USD        *float64 `json:"usd,omitempty"`
}

// Hit is the fault decision for one call.
type Hit struct {
	Fired  bool   `json:"fired"`
	Family string `json:"family,omitempty"`
	// How says what the fault did to this call, in words.
	How string `json:"how,omitempty"`
	// Performed says whether the call's effect reached the world.
	Performed bool `json:"performed"`
}
