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
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/probes"
	"github.com/crashwall/chaos/proxies/llm"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
)

// Verify reads the trial's evidence and writes its result: the final world (from the
// live hub, else from the record) against the task's state checks, the agent's closing
// message, the counts of calls and fired faults, and the outcome. It writes result.json
// to the trial folder. A missing or corrupt record makes the outcome failed, never an
// error: only a result that cannot be written is.
func (h *Host) Verify(ctx context.Context, in run.VerifyInput) (run.TrialResult, error) {
	t := in.Trial.Trial
	res := run.TrialResult{
		ID: t.ID, Cell: t.Cell, Condition: t.Condition, Rep: t.Rep, Seed: t.Seed,
		Dir: in.Workspace.TrialDir,
	}
	if res.Dir == "" {
		// The workspace was never prepared; the trial folder is still where it would be.
		dir, err := Dir(in.Trial)
		if err != nil {
			return res, badInput(fmt.Errorf("the trial has no folder to write its result to: %w", err))
		}
		res.Dir = dir
	}
	if in.Agent != nil {
		res.ExitCode, res.Duration, res.Output = in.Agent.ExitCode, in.Agent.Duration, in.Agent.Output
	}
	res.Outcome, res.Reason = outcome(in)
	// The agent ended by itself (not a timeout, an abort or a failure of ours).
	ranToItsEnd := res.Outcome == run.OutcomeCompleted
	noVerdict := func(reason string) {
		if res.Outcome != run.OutcomeFailed {
			res.Outcome, res.Reason = run.OutcomeFailed, reason
		}
	}

	s, err := h.specOf(in.Trial)
	if err != nil {
		noVerdict("the spec cannot be read: " + err.Error())
	}
	profile := "generic"
	if s != nil {
		profile = s.Agent.Profile
	}
	closing := closingMessage(res.Dir, profile, res.ExitCode)
	res.Closing = closing.Text
	log, err := record.ReadFile(filepath.Join(res.Dir, "record.jsonl"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		noVerdict("the trial has no record (the hub never started)")
		log = nil
	case err != nil:
		noVerdict("the record cannot be read: " + err.Error())
		log = nil
	case log.Start == nil:
		noVerdict("the record has no session_start row")
		log = nil
	}

	res.Profile, res.Infra = profile, closing.Infra
	if s != nil && res.Outcome == run.OutcomeCompleted {
		// An agent that ended by itself after its model calls crossed limits.max_cost_usd
		// (the proxy refused its next call, and it gave up or crashed before the watcher's
		// abort reached it) was stopped by the limit all the same.
		if why := overLimit(trialCost(h.live(in.Trial.Key()), log, closing).Spent(), s.Limits.MaxCostUSD); why != "" {
			res.Outcome, res.Reason = run.OutcomeAborted, why
			ranToItsEnd = false
		}
	}
	if why := guardLost(log); why != "" {
		noVerdict(why)
	}
	if why := adapterFailure(log); why != "" {
		noVerdict(why) // shim.go
	}
	worldKnown, clean := false, t.Condition == "clean"
	var final map[string]any
	if log != nil && s != nil {
		clean = log.Start.Fault == nil
		lt := h.live(in.Trial.Key())
		res.SuccessPossible = log.Start.SuccessPossible != nil && *log.Start.SuccessPossible
		operatorResult(&res, log) // operator.go
		res.Calls, res.Fired = len(log.Calls()), len(log.Fired())
		if log.End != nil {
			res.Calls, res.Fired = log.End.Calls, log.End.Fired
		}
		if lt != nil {
			st := lt.hub.Stats()
			res.Calls, res.Fired = st.Calls, st.Fired
		}
		task, err := trialTask(s, t.Task)
		if err != nil {
			noVerdict(err.Error())
		} else {
			var why string
			final = finalState(lt, log)
			res.Checks, res.WorldOK, why = checkState(task.StateChecks, final)
			if realWhy := h.checkReal(ctx, s, task, lt, log, in.Workspace, &res); why == "" {
				why = realWhy
			}
			if why != "" {
				noVerdict(why)
			} else {
				worldKnown = true
			}
			if res.Damage = damage(s, lt, log, final); len(res.Damage) > 0 {
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
			if worldKnown {
				h.review(ctx, s, task, t.Condition, log, closing.Text, &res) // review.go
			}
		}
	}
	toolFired := !clean && res.Fired > 0
	if toolFired {
		res.FaultsFired = append(res.FaultsFired, t.Condition)
	}
	reach := report.Reach{Profile: profile, Refused: closing.Refused}
	if s != nil {
		reach.Tools = len(s.Tools) > 0 || len(s.Servers) > 0
		// The record's calls, or the count its session_end holds (the wall's own count).
		reach.ToolCalls = max(toolCalls(log), res.Calls)
		if lt := h.live(in.Trial.Key()); lt != nil {
			st := lt.hub.Stats()
			reach.Live, reach.Contacts, reach.Initializing, reach.Initialized = true, st.Contacts, st.Initializing, st.Initialized
			reach.ToolCalls = max(reach.ToolCalls, st.Calls)
		}
	}
	if s != nil && s.Model.Upstream != "" {
		m, why := modelResult(s, h.live(in.Trial.Key()), log)
		m.NeverCalled = s.Model.Armed() && m.Calls == 0 && ranToItsEnd && log != nil
		res.Model = m
		reach.Model, reach.ModelCalls, reach.ModelFired = true, m.Calls, m.Fired
		if why != "" && m.Calls > 0 {
			noVerdict(why)
		} else if why != "" {
			// No model call at all: the agent never met the model proxy, which Reach
			// says with this (more particular) sentence.
			reach.ModelWhy = why
		}
		// The trial's fault is the tool condition and the model fault together: it is
		// clean when neither is armed, and it fired when either did.
		if s.Model.Armed() {
			clean = false
			res.Fired += m.Fired
			if m.Fired > 0 {
				res.FaultsFired = append(res.FaultsFired, "model:"+m.Fault)
			}
		}
	}
	if s != nil {
		res.Claim, res.ClaimReason, res.ClaimBy = h.judgeClaim(ctx, closing, s.Claim)
	}
	if s != nil {
		res.Unreached, res.UnreachedWhy = reach.Unreached()
	}
	facts := report.Facts{
		Outcome: res.Outcome, Reason: res.Reason, WorldOK: res.WorldOK, WorldKnown: worldKnown,
		Claim: res.Claim, Infra: closing.Infra, Clean: clean, Fired: res.Fired,
		Impossible: worldKnown && !res.SuccessPossible && res.Overrule == nil,
		Unreached:  res.Unreached, UnreachedWhy: res.UnreachedWhy,
	}
	res.Verdict, res.VerdictWhy = report.Decide(facts)
	if s != nil {
		if task, err := trialTask(s, t.Task); err == nil {
			text := closing.Text
			b, branched := readBranch(in.Workspace.TrialDir) // branchrun.go
			if branched {
				res.Branch = b.summary()
				for _, u := range b.Branch.Done {
					if unitClaim(text, u) == report.ClaimUnclear {
						// Done before the branch and not named: the clean trial's claim.
						text += "\n" + u + ": VERIFIED"
					}
				}
			}
			judgeUnits(task, &res, facts, text) // units.go
			markBranched(&res, b.Branch.Done)
		}
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
	if report.Scored(res.Verdict) && t.Condition != "clean" && !toolFired && len(res.FaultsFired) > 0 {
		// Filed under its tool condition, but only the model fault met it: say so, so the
		// condition's row never holds a trial its fault never touched without a word.
		res.VerdictWhy += fmt.Sprintf("; only the model fault fired (%s), not %s", strings.TrimPrefix(res.FaultsFired[0], "model:"), t.Condition)
	}
	// Declared outcomes are read in every trial whose world and closing message were read,
	// the fault fired or not: chaos diff compares them on every shared seed.
	if s != nil && (report.Scored(res.Verdict) || res.Verdict == report.NotTriggered) {
		res.Outcomes = declaredOutcomes(s.Outcomes, closing.Text, final)
	}

	res.Cost = trialCost(h.live(in.Trial.Key()), log, closing)
	res.Steps = append([]run.Step(nil), in.Steps...)
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return res, fmt.Errorf("encode the trial's result: %w", err)
	}
	if err := WriteFileAtomic(filepath.Join(res.Dir, "result.json"), append(b, '\n')); err != nil {
		return res, err
	}
	h.logger().Info("trial verified", "trial", t.ID, "outcome", res.Outcome, "world_ok", res.WorldOK, "calls", res.Calls, "fired", res.Fired)
	// The world has been read: close the record now, so that it is whole even if this
	// worker dies before Teardown (which then finds it closed and only cleans up).
	if lt := h.live(in.Trial.Key()); lt != nil && in.CloseReason != "" {
		if err := lt.hub.Close(in.CloseReason); err != nil {
			h.logger().Warn("could not close the record after verifying", "trial", t.ID, "error", err)
		}
	}
	return res, nil
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

// modelResult is what the trial's model proxy saw: its live counts, else the counts
// of the record's model rows. why is the reason the trial has no verdict, when it has
// none because of the model proxy: a fault that could not apply, or a faulted trial in
// which no model call reached the proxy (the fault was never tested).
func modelResult(s *spec.Spec, lt *Live, log *record.Log) (m *run.ModelResult, why string) {
	m = &run.ModelResult{Fault: s.Model.FaultName()}
	var refused string
	if log != nil {
		for _, r := range log.Rows {
			if r.Transport != llm.TransportLLM {
				continue
			}
			switch {
			case r.Type == record.TypeCall:
				m.Calls++
				if r.Hit != nil && r.Hit.Fired {
					m.Fired++
					continue
				}
				var at struct {
					Position string `json:"position"`
				}
				json.Unmarshal(r.Args, &at)
				if text, calls := llm.TurnParts(r.Reply); at.Position != "" {
					if text && !slices.Contains(m.TextAt, at.Position) {
						m.TextAt = append(m.TextAt, at.Position)
					}
					if calls && !slices.Contains(m.ToolCallsAt, at.Position) {
						m.ToolCallsAt = append(m.ToolCallsAt, at.Position)
					}
				}
			case r.Type == record.TypeError:
				m.Calls++
				if r.Hit != nil && r.Hit.Fired {
					m.Failed++
					if refused == "" {
						refused = r.Reason
						if needs, ok := faults.LackedPart(r.Hit.How); ok {
							var at struct {
								Position string `json:"position"`
							}
							json.Unmarshal(r.Args, &at)
							m.Lacked, m.LackedAt = needs, at.Position
						}
					}
				}
			}
		}
	}
	if lt != nil && lt.model != nil {
		st := lt.model.Stats()
		m.Proxy, m.Calls, m.Fired, m.Failed = lt.llmURL, st.Calls, st.Fired, st.Failed
	}
	switch {
	case m.Failed > 0:
		if refused == "" {
			refused = "model fault could not apply"
		}
		return m, fmt.Sprintf("%s (at %d of %d model calls)", refused, m.Failed, m.Calls)
	case s.Model.Armed() && m.Calls == 0:
		at := "{llm_url}"
		if m.Proxy != "" {
			at += " (" + m.Proxy + ")"
		}
		return m, fmt.Sprintf("no model call reached the model proxy at %s, so model fault %s was never tested: point the agent's model client at {llm_url}", at, m.Fault)
	}
	return m, ""
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
