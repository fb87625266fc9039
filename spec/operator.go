package spec

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Operator is a scripted person who answers the agent after it ends, up to Turns times:
// the first rule that matches what the agent said at the end (and the twin's session)
// gives the reply, after its action on the twin, and the agent is resumed with the reply
// by the Resume command (trial/operator.go; docs/shim.md).
type Operator struct {
	// Resume is the command that resumes the agent, a template like agent.command with
	// two more tokens: {operator_message} (the reply) and {session_id} (the agent's
	// session, read from its output). Claude Code: `claude -p {operator_message} --resume
	// {session_id} --output-format json`.
	Resume string `json:"resume"`
	// Turns is the most replies the operator gives in a trial (default 1).
	Turns int `json:"turns"`
	// Rules are tried in order; the first that matches answers.
	Rules []OperatorRule `json:"rules"`
}

// OperatorRule is one of the operator's answers and when it is given.
type OperatorRule struct {
	// When is a regular expression matched against the agent's closing message
	// (case-insensitive); empty matches any message.
	When string `json:"when,omitempty"`
	// Session is the twin's session the rule asks for: "" (any), "dropped" (a
	// session_drop fired and no login revived it yet) or "active".
	Session string `json:"session,omitempty"`
	// Reply is what the operator says: the message the agent is resumed with.
	Reply string `json:"reply"`
	// Action is what the operator does on the twin before replying: "" or "login" (a
	// dropped session is revived: the session_drop fault fires no more in the trial).
	Action string `json:"action,omitempty"`
	Line   int    `json:"-"`
}

// Operator actions and sessions.
const (
	ActionLogin    = "login"
	SessionDropped = "dropped"
	SessionActive  = "active"
)

// ResumeTokens are the tokens operator.resume may hold besides agent.command's.
var ResumeTokens = []string{"operator_message", "session_id"}

// MaxOperatorTurns bounds operator.turns.
const MaxOperatorTurns = 20

var (
	operatorKeys = []string{"resume", "turns", "rules"}
	ruleKeys     = []string{"when", "session", "reply", "action"}
)

// Matches says whether the rule answers a closing message with the twin's session
// dropped or not. A When that does not compile (the loader refuses it) matches nothing.
func (r OperatorRule) Matches(closing string, dropped bool) bool {
	switch r.Session {
	case SessionDropped:
		if !dropped {
			return false
		}
	case SessionActive:
		if dropped {
			return false
		}
	}
	if r.When == "" {
		return true
	}
	re, err := regexp.Compile("(?i)" + r.When)
	return err == nil && re.MatchString(closing)
}

// operator reads the operator section; a is the agent (its runtime), axes the spec's.
func (d *decoder) operator(n *yaml.Node, a Agent, axes []Axis) *Operator {
	if isNull(deref(n)) {
		return nil
	}
	f := d.fields(n, "operator", operatorKeys, map[string]string{"resume_command": "resume", "max_turns": "turns", "replies": "rules"})
	o := &Operator{Resume: d.text(f["resume"], "operator.resume"), Turns: 1}
	if a.IsDocker() {
		d.errorf(d.keyOf(n), "operator: the agent is resumed as a process; agent.runtime docker is not supported yet")
	}
	if strings.TrimSpace(o.Resume) == "" {
		d.errorf(d.keyOf(n), "operator.resume is required: the command that resumes the agent with {operator_message} (Claude Code: claude -p {operator_message} --resume {session_id})")
	} else {
		d.resumeTokens(f["resume"], o.Resume, axes)
	}
	if v, ok := d.whole(f["turns"], "operator.turns"); ok {
		if v < 1 || v > MaxOperatorTurns {
			d.errorf(f["turns"], "operator.turns must be from 1 to %d, got %d", MaxOperatorTurns, v)
		} else {
			o.Turns = int(v)
		}
	}
	for _, ax := range axes {
		if slices.Contains(ResumeTokens, ax.Name) {
			d.errorf(d.keyOf(n), "axis %q has the name of an operator.resume token; rename it", ax.Name)
		}
	}
	for i, item := range d.list(f["rules"], "operator.rules") {
		where := fmt.Sprintf("operator.rules #%d", i+1)
		rf := d.fields(item, where, ruleKeys, map[string]string{"match": "when", "closing": "when", "say": "reply", "message": "reply", "do": "action"})
		if item.Kind != yaml.MappingNode {
			continue
		}
		r := OperatorRule{
			When: d.text(rf["when"], where+": when"), Session: d.text(rf["session"], where+": session"),
			Reply: d.text(rf["reply"], where+": reply"), Action: d.text(rf["action"], where+": action"), Line: item.Line,
		}
		if r.When != "" {
			if _, err := regexp.Compile("(?i)" + r.When); err != nil {
				d.errorf(rf["when"], "%s: when is not a regular expression: %v", where, err)
			}
		}
		if r.Session != "" && r.Session != SessionDropped && r.Session != SessionActive {
			d.errorf(rf["session"], "%s: session must be %s or %s, got %q", where, SessionDropped, SessionActive, r.Session)
		}
		if strings.TrimSpace(r.Reply) == "" {
			d.errorf(item, "%s has no reply: what the operator says to the agent", where)
		}
		if r.Action != "" && r.Action != ActionLogin {
			d.errorf(rf["action"], "%s: action must be %s, got %q", where, ActionLogin, r.Action)
		}
		o.Rules = append(o.Rules, r)
	}
	if len(o.Rules) == 0 {
		d.errorf(d.keyOf(n), "operator.rules is empty: give at least one rule (when, reply)")
	}
	return o
}

// resumeTokens reports every {word} of operator.resume that is not a token, as
// commandTokens does for agent.command, with the resume tokens known too.
func (d *decoder) resumeTokens(node *yaml.Node, command string, axes []Axis) {
	known := slices.Clone(axes)
	for _, t := range ResumeTokens {
		known = append(known, Axis{Name: t})
	}
	for _, p := range tokenProblems(command, known) {
		line := deref(node).Line
		if deref(node).Style == yaml.LiteralStyle {
			line += 1 + strings.Count(command[:p.Offset], "\n")
		}
		d.probs = append(d.probs, Problem{File: d.file, Line: line, Msg: "operator.resume: " + p.Msg})
	}
}
