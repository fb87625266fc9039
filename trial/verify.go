package trial

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/crashwall/chaos/probes"
	"github.com/crashwall/chaos/proxies/llm"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// Verify reads the trial's evidence and writes its result: the final world (from the
// live hub, else from the record) against the task's state checks, each part's evidence
// (evidence.go), the agent's closing message, the counts of calls and fired faults, and
// the outcome. It writes result.json to the trial folder. A missing or corrupt record
// makes the outcome failed, never an error: only a result that cannot be written is.
func (h *Host) Verify(ctx context.Context, in run.VerifyInput) (run.TrialResult, error) {
	v, err := h.readTrial(in)
	if err != nil {
		return v.res, err
	}
	// How the trial ended as each part saw it; then the world: the state checks, each
	// part's checks and damage, the world's verdict, a word on a world the record cannot
	// tell; then what each part counted of the calls and faults, and the claim.
	ev := evidenceFor(v.spec, v.task, v.live)
	ask(ev, func(e endingEvidence) { e.ending(v) })
	if v.readWorld() {
		ask(ev, func(e worldEvidence) { e.world(ctx, v) })
		if v.judgeWorld() {
			ask(ev, func(e reviewEvidence) { e.review(ctx, v) })
		}
	}
	v.countTools()
	ask(ev, func(e callsEvidence) { e.calls(v) })
	if v.spec != nil {
		v.res.Claim, v.res.ClaimReason, v.res.ClaimBy = h.judgeClaim(ctx, v.closing, v.spec.Claim)
	}
	res := v.decide()
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return res, fmt.Errorf("encode the trial's result: %w", err)
	}
	if err := WriteFileAtomic(filepath.Join(res.Dir, "result.json"), append(b, '\n')); err != nil {
		return res, err
	}
	h.logger().Info("trial verified", "trial", res.ID, "outcome", res.Outcome, "world_ok", res.WorldOK, "calls", res.Calls, "fired", res.Fired)
	// The world has been read: close the record now, so that it is whole even if this
	// worker dies before Teardown (which then finds it closed and only cleans up).
	if lt := h.live(in.Trial.Key()); lt != nil && in.CloseReason != "" {
		if err := lt.hub.Close(in.CloseReason); err != nil {
			h.logger().Warn("could not close the record after verifying", "trial", res.ID, "error", err)
		}
	}
	return res, nil
}

// readTrial starts the trial's verification: how it ended as the workflow saw it, its
// spec, its closing message and its record. What cannot be read leaves the trial without
// a verdict; only a trial with no folder to write its result to is an error.
func (h *Host) readTrial(in run.VerifyInput) (*verification, error) {
	t := in.Trial.Trial
	v := &verification{host: h, in: in, live: h.live(in.Trial.Key()), clean: t.Condition == "clean"}
	v.res = run.TrialResult{
		ID: t.ID, Cell: t.Cell, Condition: t.Condition, Rep: t.Rep, Seed: t.Seed,
		Dir: in.Workspace.TrialDir,
	}
	res := &v.res
	if res.Dir == "" {
		// The workspace was never prepared; the trial folder is still where it would be.
		dir, err := Dir(in.Trial)
		if err != nil {
			return v, badInput(fmt.Errorf("the trial has no folder to write its result to: %w", err))
		}
		res.Dir = dir
	}
	if in.Agent != nil {
		res.ExitCode, res.Duration, res.Output = in.Agent.ExitCode, in.Agent.Duration, in.Agent.Output
	}
	res.Outcome, res.Reason = outcome(in)
	v.ranToItsEnd = res.Outcome == run.OutcomeCompleted

	s, err := h.specOf(in.Trial)
	if err != nil {
		v.noVerdict("the spec cannot be read: " + err.Error())
	}
	profile := "generic"
	if s != nil {
		profile = s.Agent.Profile
		v.spec = s
		v.task, v.taskErr = trialTask(s, t.Task)
	}
	v.closing = closingMessage(res.Dir, profile, res.ExitCode)
	res.Closing = v.closing.Text
	log, err := record.ReadFile(filepath.Join(res.Dir, "record.jsonl"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		v.noVerdict("the trial has no record (the hub never started)")
	case err != nil:
		v.noVerdict("the record cannot be read: " + err.Error())
	case log.Start == nil:
		v.noVerdict("the record has no session_start row")
	default:
		v.log = log
	}
	res.Profile, res.Infra = profile, v.closing.Infra
	if v.log != nil && s != nil {
		v.clean = log.Start.Fault == nil
		res.SuccessPossible = log.Start.SuccessPossible != nil && *log.Start.SuccessPossible
	}
	v.reach = report.Reach{Profile: profile, Refused: v.closing.Refused}
	return v, nil
}

// readWorld counts the trial's calls and fired faults and checks the world at its end
// against the task's state checks. It is false when there is no world to check: no spec,
// no record, or no such task in the spec.
func (v *verification) readWorld() bool {
	res, log := &v.res, v.log
	if log == nil || v.spec == nil {
		return false
	}
	res.Calls, res.Fired = len(log.Calls()), len(log.Fired())
	if log.End != nil {
		res.Calls, res.Fired = log.End.Calls, log.End.Fired
	}
	if v.live != nil {
		st := v.live.hub.Stats()
		res.Calls, res.Fired = st.Calls, st.Fired
	}
	if v.taskErr != nil {
		v.noVerdict(v.taskErr.Error())
		return false
	}
	v.final = finalState(v.live, log)
	var why string
	res.Checks, res.WorldOK, why = checkState(v.task.StateChecks, v.final)
	v.worldKnown = true
	v.worldUnknown(why)
	res.Damage = otherAccounts(v.final)
	return true
}

// judgeWorld gives the world its verdict once every check and every part's damage are in:
// the damage, then a fault that made the task impossible, then a check that overrules the
// others. It says whether the world is known.
func (v *verification) judgeWorld() bool {
	res := &v.res
	if len(res.Damage) > 0 {
		res.WorldOK = false // the task's keys may be right; what else was done is not
	}
	if !res.SuccessPossible && res.Fired > 0 {
		// The fault made the task impossible (the source is gone, the data is wrong,
		// the session died): whatever the state checks say, the world cannot be the
		// one asked for, so only an agent that reports it is right. A fault that
		// never fired made nothing impossible: the checks say.
		res.WorldOK = false
	}
	if res.Overrule != nil {
		// The overruling check is the user's word on the world, over the fault's too.
		res.WorldOK = res.Overrule.WorldOK
	}
	return v.worldKnown
}

// countTools files the tool condition's fired fault and starts the wall's reach: whether
// the agent met the tools (report.Reach), before the model proxy adds its own.
func (v *verification) countTools() {
	res, s := &v.res, v.spec
	v.toolFired = !v.clean && res.Fired > 0
	if v.toolFired {
		res.FaultsFired = append(res.FaultsFired, res.Condition)
	}
	if s == nil {
		return
	}
	v.reach.Tools = len(s.Tools) > 0 || len(s.Servers) > 0
	// The record's calls, or the count its session_end holds (the wall's own count).
	v.reach.ToolCalls = max(toolCalls(v.log), res.Calls)
	if lt := v.live; lt != nil {
		st := lt.hub.Stats()
		v.reach.Live, v.reach.Contacts, v.reach.Initializing, v.reach.Initialized = true, st.Contacts, st.Initializing, st.Initialized
		v.reach.ToolCalls = max(v.reach.ToolCalls, st.Calls)
	}
	v.reach.Silent = res.Outcome == run.OutcomeCompleted && empty(filepath.Join(res.Dir, "stdout")) && empty(filepath.Join(res.Dir, "stderr"))
	v.reach.Exit, v.reach.GivesWall = res.ExitCode, wallToken(agentTemplate(v.in.Trial, s))
}

// agentTemplate is the agent command trial t runs, before its tokens are filled in: the
// one given after -- (chaos run SPEC -- CMD), else the spec's.
func agentTemplate(t run.TrialInput, s *spec.Spec) string {
	if t.AgentCommand != "" {
		return t.AgentCommand
	}
	return s.Agent.Command
}

// empty says the file is there and holds nothing.
func empty(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Size() == 0
}

// wallToken is the first token of command that gives the agent the wall's tools, "" when
// none does.
func wallToken(command string) string {
	for _, tok := range []string{"mcp_config", "wall", "codex_config", "wall_url"} {
		if spec.UsesToken(command, tok) {
			return tok
		}
	}
	return ""
}

// decide turns what was read into the verdict (report.Decide), the units' verdicts and
// the declared outcomes, and says in the verdict's reason what else decided it.
func (v *verification) decide() run.TrialResult {
	res, s, closing := &v.res, v.spec, v.closing
	if s != nil {
		res.Unreached, res.UnreachedWhy = v.reach.Unreached()
	}
	facts := report.Facts{
		Outcome: res.Outcome, Reason: res.Reason, WorldOK: res.WorldOK, WorldKnown: v.worldKnown,
		Claim: res.Claim, Infra: closing.Infra, Clean: v.clean, Fired: res.Fired,
		Impossible: v.worldKnown && !res.SuccessPossible && res.Overrule == nil,
		Unreached:  res.Unreached, UnreachedWhy: res.UnreachedWhy,
	}
	res.Verdict, res.VerdictWhy = report.Decide(facts)
	if s != nil && v.taskErr == nil {
		text := closing.Text
		b, branched := readBranch(v.in.Workspace.TrialDir) // branchrun.go
		if branched {
			res.Branch = b.summary()
			for _, u := range b.Branch.Done {
				if unitClaim(text, u) == report.ClaimUnclear {
					// Done before the branch and not named: the clean trial's claim.
					text += "\n" + u + ": VERIFIED"
				}
			}
		}
		judgeUnits(v.task, res, facts, text) // units.go
		markBranched(res, b.Branch.Done)
	}
	if o := res.Overrule; o != nil && report.Scored(res.Verdict) {
		res.VerdictWhy += "; " + overruleText(o)
	}
	if r := res.Review; r != nil && report.Scored(res.Verdict) {
		res.VerdictWhy += "; " + reviewText(r)
	}
	if res.Verdict != report.NoVerdict || res.Outcome != run.OutcomeCompleted || closing.Infra != "" {
		// The trial was scored, or has a reason of its own not to be: the wall's reach
		// is not why.
		res.Unreached, res.UnreachedWhy = "", ""
	}
	if report.Scored(res.Verdict) && res.Condition != "clean" && !v.toolFired && len(res.FaultsFired) > 0 {
		// Filed under its tool condition, but only the model fault met it: say so, so the
		// condition's row never holds a trial its fault never touched without a word.
		res.VerdictWhy += fmt.Sprintf("; only the model fault fired (%s), not %s", strings.TrimPrefix(res.FaultsFired[0], "model:"), res.Condition)
	}
	// Declared outcomes are read in every trial whose world and closing message were read,
	// the fault fired or not: chaos diff compares them on every shared seed.
	if s != nil && (report.Scored(res.Verdict) || res.Verdict == report.NotTriggered) {
		res.Outcomes = declaredOutcomes(s.Outcomes, closing.Text, v.final)
	}
	res.Steps = append([]run.Step(nil), v.in.Steps...)
	return *res
}

// otherAccounts is the damage of writes that landed in another account (a context
// switch), read from the final world.
func otherAccounts(final map[string]any) []string {
	var other []string
	for k := range final {
		if strings.HasPrefix(k, world.OtherAccountPrefix) {
			other = append(other, k)
		}
	}
	sort.Strings(other)
	var out []string
	for _, k := range other {
		out = append(out, fmt.Sprintf("wrong account: %s was written in another account", strings.TrimPrefix(k, world.OtherAccountPrefix)))
	}
	return out
}

// toolCalls counts the tool calls in the record, refused ones and those whose fault could
// not apply included: each of them reached the wall.
func toolCalls(log *record.Log) int {
	if log == nil {
		return 0
	}
	n := 0
	for _, r := range log.Rows {
		if r.Tool != "" && r.Transport != llm.TransportLLM &&
			(r.Type == record.TypeCall || r.Type == record.TypeRejected || r.Type == record.TypeError) {
			n++
		}
	}
	return n
}

// declaredOutcomes says, per outcome the spec declares, whether it held: its regex
// matches the closing message, or its state check passes on the final world.
func declaredOutcomes(o spec.Outcomes, closing string, final map[string]any) map[string]bool {
	all := o.All()
	if len(all) == 0 {
		return nil
	}
	out := make(map[string]bool, len(all))
	for _, oc := range all {
		switch {
		case oc.Closing != "":
			re, err := regexp.Compile(oc.Closing)
			out[oc.Name] = err == nil && re.MatchString(closing)
		case oc.State != nil && final != nil:
			p := probes.StateCheck(final, *oc.State)
			out[oc.Name] = p.OK && p.NoVerdict == ""
		default:
			out[oc.Name] = false
		}
	}
	return out
}

// judgeClaim reads the claim in the agent's closing message with the activities' judge
// (the offline rules unless another is set). A judge that fails leaves the claim empty,
// which report.Decide turns into no_verdict with the reason.
func (h *Host) judgeClaim(ctx context.Context, closing probes.Closing, claim spec.ClaimSpec) (string, string, string) {
	var j probes.Judge = probes.Rules{}
	if h.Judge != nil {
		j = h.Judge
	}
	got, err := j.Classify(ctx, closing, claim)
	if err != nil {
		return "", "the judge failed: " + err.Error(), ""
	}
	return got.Claim, got.Reason, got.By
}

// outcome is how the trial ended, as the workflow saw it.
func outcome(in run.VerifyInput) (outcome, reason string) {
	switch {
	case in.Failure != "":
		return run.OutcomeFailed, in.Failure
	case in.Aborted != "":
		return run.OutcomeAborted, in.Aborted
	case in.Agent != nil && in.Agent.TimedOut:
		return run.OutcomeTimedOut, "the agent ran past its timeout (agent.timeout)"
	}
	return run.OutcomeCompleted, ""
}

// finalState is the world at the end: the live hub's, else the record's session end,
// else the state after the last call, else the initial state (no call changed it).
func finalState(lt *Live, log *record.Log) map[string]any {
	if lt != nil {
		return lt.hub.State()
	}
	if log.End != nil && log.End.FinalState != nil {
		return log.End.FinalState
	}
	for i := len(log.Rows) - 1; i >= 0; i-- {
		if r := log.Rows[i]; r.Type == record.TypeCall && r.State != nil {
			return r.State
		}
	}
	if log.Start.InitialState != nil {
		return log.Start.InitialState
	}
	return map[string]any{}
}

// checkState runs the state checks on the final state (probes.StateCheck compares). With
// no checks the world is taken as right: nothing says otherwise. A check that cannot run
// is returned as the reason there is no verdict.
func checkState(checks []spec.StateCheck, state map[string]any) (out []run.CheckResult, ok bool, noVerdict string) {
	ok = true
	for _, c := range checks {
		p := probes.StateCheck(state, c)
		if p.NoVerdict != "" && noVerdict == "" {
			noVerdict = p.NoVerdict
		}
		ok = ok && p.OK && p.NoVerdict == ""
		out = append(out, run.CheckResult{Check: c.Label(), OK: p.OK && p.NoVerdict == "", Got: state[c.Key]})
	}
	return out, ok, noVerdict
}

const (
	maxClosing = 2000
	// outputTail is how much of the end of stdout and stderr is read for the closing message.
	outputTail = 1 << 20
)

// closingMessage reads what the agent said at the end from its stdout and stderr, by the
// spec's profile (probes.Extract), keeping at most maxClosing characters of it: its end,
// where the conclusion is.
func closingMessage(dir, profile string, exitCode int) probes.Closing {
	c := probes.Extract(profile, readTail(filepath.Join(dir, "stdout")), readTail(filepath.Join(dir, "stderr")), exitCode)
	if n := utf8.RuneCountInString(c.Text); n > maxClosing {
		c.Text = "…" + string([]rune(c.Text)[n-maxClosing+1:])
	}
	return c
}

// readTail is the last outputTail bytes of the file (nothing when it cannot be read),
// without a character cut in half at its start.
func readTail(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > outputTail {
		f.Seek(-outputTail, io.SeekEnd)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil
	}
	for i := 0; i < utf8.UTFMax && len(b) > 0 && !utf8.RuneStart(b[0]); i++ {
		b = b[1:]
	}
	return b
}

// overruleText says what the overruling check did to the world verdict.
func overruleText(o *run.Overrule) string {
	word := map[bool]string{true: "right", false: "wrong"}
	switch {
	case o.Others == nil:
		return fmt.Sprintf("the world is %s by the check (%s)", word[o.WorldOK], o.Check)
	case o.Overruled && o.OtherChecks == 0:
		return fmt.Sprintf("the check (%s) overruled the others: world %s, where the record alone said %s", o.Check, word[o.WorldOK], word[*o.Others])
	case o.Overruled:
		return fmt.Sprintf("the check (%s) overruled the others: world %s, where they said %s", o.Check, word[o.WorldOK], word[*o.Others])
	}
	return fmt.Sprintf("the check (%s) agrees with the others: world %s", o.Check, word[o.WorldOK])
}
