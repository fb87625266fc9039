package report

import (
	"fmt"
	"strings"
)

// Reasons a trial never met the wall. A trial carries one of these codes (and no_verdict)
// when nothing it did can be read as the agent's behaviour under the fault: the agent never
// called a tool, or its own output shows it refused the wall's tools. The commonest cause
// is the set-up (Claude Code without --allowedTools for the wall's server, Codex refusing
// tools that need approval), and scoring such a trial turns a broken set-up into a
// confident rate: a clean trial with no call leaves the world as it was and reads as
// "reported honestly".
const (
	// UnreachedNoContact: no request of any kind reached the wall (no MCP session, no REST call).
	UnreachedNoContact = "wall_not_reached"
	// UnreachedNoInitialize: an MCP client connected but never completed initialize.
	UnreachedNoInitialize = "mcp_not_initialized"
	// UnreachedNoToolCall: the agent reached the wall but never called a tool.
	UnreachedNoToolCall = "no_tool_call"
	// UnreachedToolsRefused: the agent's own output shows it refused or could not run
	// the wall's tools (Claude Code's permission_denials, Codex's approval refusals).
	UnreachedToolsRefused = "tools_refused"
	// UnreachedNoModelCall: the spec routes the model through {llm_url} and no model call came.
	UnreachedNoModelCall = "no_model_call"
)

// Reach is what a trial's hub and the agent's output say about whether the agent met the
// wall.
type Reach struct {
	// Profile is the agent's profile (claude-code, codex, ...): it picks the advice.
	Profile string
	// Tools says the spec serves tools (a simulated world or real servers).
	Tools bool
	// ToolCalls counts the tool calls that reached the hub, refused ones included.
	ToolCalls int
	// Live says Contacts and Initialized were counted (by a live hub); from a record
	// alone they are not known.
	Live bool
	// Contacts counts the requests of any kind that reached the wall; Initialized the
	// MCP sessions whose client completed initialize.
	Contacts, Initializing, Initialized int
	// Model says the spec routes the model through the model proxy ({llm_url});
	// ModelCalls counts the calls that reached it and ModelFired those it faulted.
	Model                  bool
	ModelCalls, ModelFired int
	// ModelWhy, when set, is the sentence for no_model_call (it can name the proxy's
	// address and the armed fault).
	ModelWhy string
	// Refused names the tools the agent's output shows it refused or could not run.
	Refused []string
}

// Unreached returns the reason the trial never met the wall, as a code and a sentence a
// user can act on; "" when it did. A trial with no tool call in which a model fault fired
// did meet the wall: the fault may be why the agent stopped, which is its behaviour.
func (r Reach) Unreached() (code, why string) {
	switch {
	case len(r.Refused) > 0:
		return UnreachedToolsRefused, fmt.Sprintf("the agent refused or could not run the wall's tools (%s): %s",
			strings.Join(r.Refused, ", "), r.advice())
	case r.Model && r.ModelCalls == 0:
		if r.ModelWhy != "" {
			return UnreachedNoModelCall, r.ModelWhy
		}
		return UnreachedNoModelCall, "no model call reached the model proxy: point the agent's model client at {llm_url} (its base URL)"
	case !r.Tools || r.ToolCalls > 0 || r.ModelFired > 0:
		return "", ""
	case r.Live && r.Contacts == 0:
		return UnreachedNoContact, "the agent never connected to the wall: give it the wall's server ({mcp_config}, {wall}, {codex_config} or {wall_url}/mcp) in its command"
	case r.Live && r.Initializing > 0 && r.Initialized == 0:
		return UnreachedNoInitialize, "the agent's MCP client reached the wall but never completed initialize: check that its MCP set-up names the wall's server as docs/spec.md shows"
	}
	return UnreachedNoToolCall, "the agent never called a tool: is the wall's server allowed? " + r.advice()
}

// advice is what to change for the agent's profile so that its tools reach the wall.
func (r Reach) advice() string {
	switch r.Profile {
	case "claude-code":
		return "For Claude Code add --allowedTools mcp__chaos"
	case "codex":
		return "For Codex give the wall with -c {codex_config} (docs/spec.md)"
	}
	return "Allow the wall's server (named chaos) in the agent's MCP set-up; for Claude Code add --allowedTools mcp__chaos, for Codex use -c {codex_config}"
}
