package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
)

// Verify reads the trial's evidence and writes its result: the final world (from the
// live hub, else from the record) against the task's state checks, the agent's closing
// message, the counts of calls and fired faults, and the outcome. It writes result.json
// to the trial folder. A missing or corrupt record makes the outcome failed, never an
// error: only a result that cannot be written is.
func (a *Activities) Verify(ctx context.Context, in run.VerifyInput) (run.TrialResult, error) {
	t := in.Trial.Trial
	res := run.TrialResult{
		ID: t.ID, Cell: t.Cell, Condition: t.Condition, Rep: t.Rep, Seed: t.Seed,
		Dir: in.Workspace.TrialDir,
	}
	if res.Dir == "" {
		// The workspace was never prepared; the trial folder is still where it would be.
		res.Dir, _ = trialDir(in.Trial)
	}
	if in.Agent != nil {
		res.ExitCode, res.Duration = in.Agent.ExitCode, in.Agent.Duration
	}
	res.Outcome, res.Reason = outcome(in)
	noVerdict := func(reason string) {
		if res.Outcome != run.OutcomeFailed {
			res.Outcome, res.Reason = run.OutcomeFailed, reason
		}
	}

	if res.Dir != "" {
		res.Closing = closingMessage(filepath.Join(res.Dir, "stdout"))
	}
	s, err := parseSpec(in.Trial.Spec)
	if err != nil {
		noVerdict("the spec cannot be read: " + err.Error())
	}
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

	if log != nil && s != nil {
		lt := a.live(in.Trial.Key())
		res.SuccessPossible = log.Start.SuccessPossible != nil && *log.Start.SuccessPossible
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
			res.Checks, res.WorldOK = checkState(task.StateChecks, finalState(lt, log))
		}
		res.Claim, res.Verdict = judge(s, res)
	}

	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return res, fmt.Errorf("encode the trial's result: %w", err)
	}
	if res.Dir == "" {
		return res, errors.New("the trial has no folder to write its result to")
	}
	if err := writeFileAtomic(filepath.Join(res.Dir, "result.json"), append(b, '\n')); err != nil {
		return res, err
	}
	a.logger().Info("trial verified", "trial", t.ID, "outcome", res.Outcome, "world_ok", res.WorldOK, "calls", res.Calls, "fired", res.Fired)
	return res, nil
}

// judge reads the claim in the agent's closing message and gives the verdict (world x
// claim). The judge is another issue: until then every trial is unjudged ("", "").
func judge(s *spec.Spec, res run.TrialResult) (claim, verdict string) {
	return "", ""
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
func finalState(lt *liveTrial, log *record.Log) map[string]any {
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

// checkState runs the state checks on the final state. With no checks the world is
// taken as right: nothing says otherwise.
func checkState(checks []spec.StateCheck, state map[string]any) ([]run.CheckResult, bool) {
	ok := true
	var out []run.CheckResult
	for _, c := range checks {
		r := checkOne(c, state)
		ok = ok && r.OK
		out = append(out, r)
	}
	return out, ok
}

func checkOne(c spec.StateCheck, state map[string]any) run.CheckResult {
	got, present := state[c.Key]
	r := run.CheckResult{Got: got}
	switch c.Op {
	case "equals":
		r.Check = fmt.Sprintf("%s equals %s", c.Key, jsonText(c.Equals))
		r.OK = present && jsonEqual(got, c.Equals)
	case "not_equals":
		// A key that is not set is not equal to anything.
		r.Check = fmt.Sprintf("%s not_equals %s", c.Key, jsonText(c.NotEquals))
		r.OK = !present || !jsonEqual(got, c.NotEquals)
	case "contains":
		r.Check = fmt.Sprintf("%s contains %q", c.Key, c.Contains)
		r.OK = present && strings.Contains(valueText(got), c.Contains)
	case "matches":
		r.Check = fmt.Sprintf("%s matches %q", c.Key, c.Matches)
		re, err := regexp.Compile(c.Matches)
		r.OK = err == nil && present && re.MatchString(valueText(got))
	case "absent":
		r.Check = c.Key + " is absent"
		r.OK = !present
	default:
		r.Check = fmt.Sprintf("%s: unknown comparison %q", c.Key, c.Op)
	}
	return r
}

// jsonEqual compares two values as JSON does: 1 and 1.0 are equal, "1" and 1 are not.
func jsonEqual(a, b any) bool { return reflect.DeepEqual(asJSON(a), asJSON(b)) }

func asJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// valueText is a state value as text: a string as it is, anything else as JSON.
func valueText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return jsonText(v)
}

const (
	maxClosing = 2000
	// closingTail is how much of the end of stdout is read for the closing message.
	closingTail = 64 << 10
)

var blankLine = regexp.MustCompile(`\n[ \t]*\n`)

// closingMessage is the last paragraph of the agent's stdout, trimmed, at most
// maxClosing characters (its end, where the conclusion is, when longer).
func closingMessage(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > closingTail {
		f.Seek(-closingTail, io.SeekEnd)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return ""
	}
	text := strings.ToValidUTF8(strings.ReplaceAll(string(b), "\r\n", "\n"), "")
	parts := blankLine.Split(text, -1)
	for i := len(parts) - 1; i >= 0; i-- {
		p := strings.TrimSpace(parts[i])
		if p == "" {
			continue
		}
		if n := utf8.RuneCountInString(p); n > maxClosing {
			r := []rune(p)
			p = "…" + string(r[n-maxClosing+1:])
		}
		return p
	}
	return ""
}
