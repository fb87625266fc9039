package trial

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
)

// The scripted operator (spec operator:): when the agent ends by itself, the first rule
// that matches its closing message (and the twin's session) answers; the rule's action
// is done on the twin (login: a dropped session is revived, hub/login.go), an operator
// row goes into the record, and the agent is resumed with the reply by operator.resume,
// whose {operator_message} and {session_id} reach it, like every token, as the values of
// environment variables its shell expands after parsing (spec.FillCommand): never as
// shell text. Each turn's output is kept as stdout.N and stderr.N (N = 0 for the first
// run); stdout and stderr are the last run's, whose closing message is the trial's.
// agent.timeout bounds the first run and every resumed one together.

// maxSessionID is the longest session id the operator resumes.
const maxSessionID = 200

// operate gives the operator's turns after the agent's first run, res, ended by itself
// before until. It updates res with each resumed run (exit code, timeout, output) and
// says whether the activity was cancelled meanwhile.
func (h *Host) operate(ctx context.Context, s *spec.Spec, in run.AgentInput, res *run.AgentResult, until time.Time, log *slog.Logger) (cancelled bool) {
	op := s.Operator
	lt := h.live(in.Trial.Key())
	if lt == nil || lt.hub == nil {
		log.Warn("the operator has no hub to act on (the trial's hub is gone); the agent is not resumed")
		return false
	}
	dir := in.Workspace.TrialDir
	for turn := 1; turn <= op.Turns; turn++ {
		closing := closingMessage(dir, s.Agent.Profile, res.ExitCode)
		if closing.Infra != "" {
			// The agent did not end by its own word (its model API failed, say): nobody asked
			// the operator anything.
			return false
		}
		dropped := lt.hub.SessionDropped()
		n := -1
		for i, r := range op.Rules {
			if r.Matches(closing.Text, dropped) {
				n = i
				break
			}
		}
		if n < 0 {
			return false
		}
		rule := op.Rules[n]
		row := &record.Operator{Turn: turn, Rule: n + 1, Asked: closing.Text, Said: rule.Reply, Action: rule.Action}
		tokens := maps.Clone(in.Hub.Tokens)
		if tokens == nil {
			tokens = map[string]string{}
		}
		tokens["operator_message"] = rule.Reply
		if strings.Contains(op.Resume, "{session_id}") {
			id, err := sessionID(string(readTail(filepath.Join(dir, "stdout"))))
			row.SessionID = id
			if err != nil {
				row.Error = err.Error()
			}
			tokens["session_id"] = id
		}
		command, err := fillAgentCommand(op.Resume, tokens)
		if err != nil && row.Error == "" {
			row.Error = "operator.resume: " + err.Error()
		}
		if row.Error == "" && time.Until(until) <= 0 {
			row.Error = "agent.timeout has run out: no time is left to resume the agent"
		}
		if row.Error == "" && rule.Action == spec.ActionLogin {
			row.Done = string(lt.hub.Login())
		}
		if err := lt.hub.Record(record.Row{Type: record.TypeOperator, Operator: row}); err != nil && !errors.Is(err, hub.ErrClosed) {
			log.Warn("the operator's turn could not be recorded", "turn", turn, "error", err)
		}
		if row.Error != "" {
			log.Info("the operator answered but the agent is not resumed", "turn", turn, "why", row.Error)
			return false
		}
		// The run that just ended keeps its output as stdout.N and stderr.N.
		for _, f := range []string{"stdout", "stderr"} {
			if err := os.Rename(filepath.Join(dir, f), filepath.Join(dir, fmt.Sprintf("%s.%d", f, turn-1))); err != nil && !errors.Is(err, os.ErrNotExist) {
				log.Warn("the agent's output could not be kept before resuming it", "file", f, "error", err)
			}
		}
		log.Info("the operator answered; resuming the agent", "turn", turn, "rule", n+1, "action", rule.Action, "done", row.Done)
		resumed := in
		resumed.Hub.Command, resumed.Hub.Tokens = command, tokens
		var stopped bool
		*res, stopped = h.runTurn(ctx, s, resumed, until, log)
		if stopped {
			return true
		}
		if res.Error != "" || res.TimedOut {
			return false
		}
	}
	return false
}

// runTurn runs one resumed agent until it ends, until passes (a timeout) or ctx is done
// (stopped), with its output in the trial folder's stdout and stderr.
func (h *Host) runTurn(ctx context.Context, s *spec.Spec, in run.AgentInput, until time.Time, log *slog.Logger) (res run.AgentResult, stopped bool) {
	limit := h.outputCap()
	stdout, err := captureTo(filepath.Join(in.Workspace.TrialDir, "stdout"), limit)
	if err != nil {
		return run.AgentResult{Error: "the resumed agent's stdout file: " + err.Error()}, false
	}
	stderr, err := captureTo(filepath.Join(in.Workspace.TrialDir, "stderr"), limit)
	if err != nil {
		stdout.finish(0)
		return run.AgentResult{Error: "the resumed agent's stderr file: " + err.Error()}, false
	}
	finish := func(wait time.Duration) {
		od, oerr := stdout.finish(wait)
		ed, eerr := stderr.finish(wait)
		if err := errors.Join(oerr, eerr); err != nil {
			log.Warn("the resumed agent's output was not kept whole", "error", err)
		}
		res.Output = outputResult(limit, od, ed)
	}
	stdout.start()
	stderr.start()
	agent, err := h.runtimeFor(s).start(ctx, s, in, stdout, stderr)
	if err != nil {
		res.Error = "the resumed agent could not start: " + err.Error()
		finish(0)
		return res, false
	}
	deadline := time.NewTimer(time.Until(until))
	defer deadline.Stop()
	select {
	case <-agent.done():
	case <-deadline.C:
		res.TimedOut = true
		log.Info("the resumed agent timed out; stopping it")
		agent.stop()
	case <-ctx.Done():
		stopped = true
		agent.stop()
	}
	res.ExitCode = agent.finish(ctx)
	finish(stopGrace)
	log.Info("the resumed agent ended", "exit_code", res.ExitCode, "timed_out", res.TimedOut)
	return res, stopped
}

// sessionID is the agent's session id from its output: the session_id of the last JSON
// object in it (the whole output, or one line of it: Claude Code's --output-format json
// or stream-json; a shell reference agent prints {"session_id": "..."}). An id that
// could be taken for a flag, holds a control character or is too long is refused.
func sessionID(stdout string) (string, error) {
	id, found := "", false
	var whole map[string]any
	if json.Unmarshal([]byte(strings.TrimSpace(stdout)), &whole) == nil {
		id, found = whole["session_id"].(string)
	}
	lines := strings.Split(stdout, "\n")
	for i := len(lines) - 1; i >= 0 && !found; i-- {
		l := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(l, "{") {
			continue
		}
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil {
			id, found = m["session_id"].(string)
		}
	}
	switch {
	case !found || id == "":
		return "", errors.New(`the agent's output holds no session id (a JSON object with "session_id") to resume it with`)
	case len(id) > maxSessionID:
		return "", fmt.Errorf("the agent's session id is %d bytes long (at most %d): not resumed", len(id), maxSessionID)
	case strings.HasPrefix(id, "-"):
		return "", fmt.Errorf("the agent's session id %q starts with -, and would be read as a flag: not resumed", id)
	case strings.ContainsFunc(id, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "", fmt.Errorf("the agent's session id %q holds a control character: not resumed", id)
	}
	return id, nil
}

// operatorEvidence is the scripted operator's evidence, read from the record: its turns
// after the agent ended, as operate wrote them.
type operatorEvidence struct{}

func (operatorEvidence) part() string { return "operator" }

func (operatorEvidence) ending(v *verification) { operatorResult(&v.res, v.log) }

// operatorResult puts the record's operator turns into the trial's result. A login that
// revived a dropped session made the task possible again: the world is then judged by
// its checks, not ruled wrong by the session_drop.
func operatorResult(res *run.TrialResult, log *record.Log) {
	if log == nil {
		return
	}
	for _, r := range log.Rows {
		if r.Type != record.TypeOperator || r.Operator == nil {
			continue
		}
		res.Operator = append(res.Operator, *r.Operator)
		if r.Operator.Done == string(hub.LoginRevived) {
			res.SuccessPossible = true
		}
	}
}
