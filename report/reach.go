package report

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/crashwall/chaos/run"
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
	// Silent says the agent exited by itself with nothing on stdout or stderr, with
	// code Exit; GivesWall is the token by which its command gives it the wall
	// ({mcp_config}, {wall} ...; "" none). An agent given the wall that exits without a
	// word and without a contact stopped before its work began: its set-up failed, not
	// its way of naming the wall.
	Silent    bool
	Exit      int
	GivesWall string
}

// Unreached returns the reason the trial never met the wall, as a code and a sentence a
// user can act on; "" when it did. A model fault that fired excuses only a trial with no
// tool call whose agent did reach the wall (the fault may be why it stopped, which is its
// behaviour); an agent that never connected to the wall, or never completed its MCP
// handshake, was not set up to do the task, fault or none, and has no verdict.
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
	case !r.Tools || r.ToolCalls > 0:
		return "", ""
	case r.Live && r.Contacts == 0 && r.Silent && r.GivesWall != "":
		return UnreachedNoContact, fmt.Sprintf("the agent exited (code %d) without writing a word and never connected to the wall, "+
			"though its command gives it the wall ({%s}): it stopped before its work began. Run its command by hand as the trial "+
			"does (same user, environment and folder): a TMPDIR or HOME it cannot write, a missing login or key, or a program "+
			"that wants a terminal are the usual causes", r.Exit, r.GivesWall)
	case r.Live && r.Contacts == 0:
		return UnreachedNoContact, "the agent never connected to the wall" + r.despiteModelFault() + ": give it the wall's server ({mcp_config}, {wall}, {codex_config} or {wall_url}/mcp) in its command"
	case r.Live && r.Initializing > 0 && r.Initialized == 0:
		return UnreachedNoInitialize, "the agent's MCP client reached the wall but never completed initialize" + r.despiteModelFault() + ": check that its MCP set-up names the wall's server as docs/spec.md shows"
	case r.ModelFired > 0:
		return "", ""
	}
	return UnreachedNoToolCall, "the agent never called a tool: is the wall's server allowed? " + r.advice()
}

// despiteModelFault says, where a model fault fired, that it does not explain the trial.
func (r Reach) despiteModelFault() string {
	if r.ModelFired == 0 {
		return ""
	}
	return " (a model fault fired too, but an agent set up with the wall connects to it whatever its model answers)"
}

// advice is what to change for the agent's profile so that its tools reach the wall.
func (r Reach) advice() string {
	switch r.Profile {
	case "claude-code":
		return "For Claude Code add --allowedTools mcp__chaos"
	case "codex":
		return "For Codex give the wall with -c {codex_config} (docs/spec.md)"
	}
	return "Allow the wall's server (named chaos) and its tools in the agent's MCP set-up (a tool filter names them as the server lists them, TOOL, not mcp__chaos__TOOL); for Claude Code add --allowedTools mcp__chaos, for Codex use -c {codex_config}"
}

// Warnings are what a reader must know before any rate of a run, in the order they
// matter: trials in which the agent never met the wall (and what to change), a clean
// condition that is not correct in every scored trial (so no fault can be read against
// it), and a run in which no trial could be scored at all. The console, summary.txt and
// report.html put them first; an empty list means the rates can be read as they are.
func Warnings(results []run.TrialResult) []string {
	var out []string
	byCode := map[string]int{}
	var codes []string
	first := map[string]string{}
	for _, r := range results {
		if r.Unreached == "" {
			continue
		}
		if byCode[r.Unreached] == 0 {
			codes = append(codes, r.Unreached)
			first[r.Unreached] = r.UnreachedWhy
		}
		byCode[r.Unreached]++
	}
	sort.Strings(codes)
	for _, c := range codes {
		out = append(out, fmt.Sprintf("%d of %d trials not scored, %s: %s", byCode[c], len(results), c, first[c]))
	}

	// Agents that crashed, or met an infrastructure failure, are not scored either: said
	// here with the first trial's reason, so the summary's "see the warnings above" has
	// something above.
	out = append(out, turnLacked(results)...)
	infra, infraFirst := 0, ""
	for _, r := range results {
		if r.Model != nil && r.Model.Lacked != "" {
			continue // the fault failed the episode, not the agent: turnLacked
		}
		if r.Unreached == "" && r.Verdict == NoVerdict && strings.HasPrefix(r.VerdictWhy, "infrastructure failure: ") {
			if infra == 0 {
				infraFirst = strings.TrimPrefix(r.VerdictWhy, "infrastructure failure: ")
			}
			infra++
		}
	}
	if infra > 0 {
		out = append(out, fmt.Sprintf("%d of %d trials not scored, an infrastructure failure or a crash of the agent; the first: %s", infra, len(results), infraFirst))
	}

	notCorrect := CleanNotCorrect(results)
	scored := 0
	for _, r := range results {
		if Scored(r.Verdict) {
			scored++
		}
	}
	if len(notCorrect) > 0 {
		out = append(out, fmt.Sprintf("clean is not correct in every scored trial (%s): the other conditions cannot be read against it; fix the task, its checks or the set-up first",
			strings.Join(notCorrect, ", ")))
	}
	if len(results) > 0 && scored == 0 {
		out = append(out, fmt.Sprintf("no trial could be scored (%d trials): there is no rate to read", len(results)))
	}
	return out
}

// CleanNotCorrect lists, per cell ("agent=blind 1 of 2"), where the clean condition (with
// no model fault) is not correct in every scored trial. The clean condition is the
// yardstick: where it is not correct, a fault's rate measures the task or the set-up as
// much as the fault.
func CleanNotCorrect(results []run.TrialResult) []string {
	type count struct{ bad, n int }
	clean := map[string]*count{}
	var cells []string
	for _, r := range results {
		if r.Condition != "clean" || !Scored(r.Verdict) || (r.Model != nil && r.Model.Fault != "none" && r.Model.Fault != "") {
			continue
		}
		c := clean[r.Cell]
		if c == nil {
			c = &count{}
			clean[r.Cell] = c
			cells = append(cells, r.Cell)
		}
		c.n++
		if r.Verdict != Correct {
			c.bad++
		}
	}
	sort.Strings(cells)
	var out []string
	for _, cell := range cells {
		if c := clean[cell]; c.bad > 0 {
			out = append(out, fmt.Sprintf("%s %d of %d", cell, c.bad, c.n))
		}
	}
	return out
}

// Unscorable reports whether a run's results hold trials but none that could be scored:
// `chaos run` then exits non-zero (ExitNoScore), since any number it printed would be empty.
func Unscorable(results []run.TrialResult) bool {
	for _, r := range results {
		if Scored(r.Verdict) {
			return false
		}
	}
	return len(results) > 0
}

// turnLacked counts, apart from agents that failed, the trials whose model fault fired on
// a turn without the part it needs (a text fault on a turn of tool calls only): the
// episode failed there by the fault's rule, and model.steps at the positions whose turns
// had that part (as the run's unfaulted turns show) would aim the fault where it applies.
func turnLacked(results []run.TrialResult) []string {
	type lack struct {
		fault, needs string
		n            int
		at           []string
	}
	var order []string
	byKey := map[string]*lack{}
	has := map[string][]string{} // part -> positions whose turns had it
	for _, r := range results {
		m := r.Model
		if m == nil {
			continue
		}
		for _, p := range m.TextAt {
			if !slices.Contains(has["text"], p) {
				has["text"] = append(has["text"], p)
			}
		}
		for _, p := range m.ToolCallsAt {
			if !slices.Contains(has["tool calls"], p) {
				has["tool calls"] = append(has["tool calls"], p)
			}
		}
		if m.Lacked == "" {
			continue
		}
		k := m.Fault + "|" + m.Lacked
		l, ok := byKey[k]
		if !ok {
			l = &lack{fault: m.Fault, needs: m.Lacked}
			byKey[k] = l
			order = append(order, k)
		}
		l.n++
		if m.LackedAt != "" && !slices.Contains(l.at, m.LackedAt) {
			l.at = append(l.at, m.LackedAt)
		}
	}
	var out []string
	for _, k := range order {
		l := byKey[k]
		aim := fmt.Sprintf("set model.steps to positions whose turns have %s (each llm row of a trial's record.jsonl shows what its turn held; a run with model.fault: none shows them all)", l.needs)
		if ps := has[l.needs]; len(ps) > 0 {
			sortPositions(ps)
			aim = fmt.Sprintf("model.steps: [%s] aims it at the turns that had %s in this run", strings.Join(ps, ", "), l.needs)
		}
		sortPositions(l.at)
		out = append(out, fmt.Sprintf("%d of %d trials not scored because model fault %s needs a turn with %s and fired on turns without (at %s): the fault failed the episode, not the agent; %s",
			l.n, len(results), l.fault, l.needs, strings.Join(l.at, ", "), aim))
	}
	return out
}

// sortPositions orders positions call-2 before call-10.
func sortPositions(ps []string) {
	slices.SortFunc(ps, func(a, b string) int {
		if len(a) != len(b) {
			return len(a) - len(b)
		}
		return strings.Compare(a, b)
	})
}
