package trial

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/run"
)

// TestSessionID: the session id is the session_id of the last JSON object in the
// agent's output (Claude Code's JSON result, a shell agent's JSON line); an id that is
// missing, could be read as a flag or holds a control character is refused.
func TestSessionID(t *testing.T) {
	ok := []struct{ out, want string }{
		{`{"type":"result","result":"Done.","session_id":"9f1c2a7e-0b1d-4c55-a1d2-3e4f5a6b7c8d"}`, "9f1c2a7e-0b1d-4c55-a1d2-3e4f5a6b7c8d"},
		{"{\n  \"session_id\": \"pretty\"\n}\n", "pretty"},
		{"{\"session_id\": \"first\"}\nworking...\n{\"type\":\"x\"}\n{\"session_id\": \"last\"}\nR-101: VERIFIED\n", "last"},
		{`{"session_id": "a'$(touch x)'; rm -rf /"}`, `a'$(touch x)'; rm -rf /`}, // text, never shell: it is passed as a value
	}
	for _, c := range ok {
		if got, err := sessionID(c.out); err != nil || got != c.want {
			t.Errorf("sessionID(%q) = %q, %v; want %q", c.out, got, err, c.want)
		}
	}
	bad := []struct{ out, want string }{
		{"Done.\nR-101: VERIFIED\n", "holds no session id"},
		{`{"session_id": ""}`, "holds no session id"},
		{`{"session_id": 42}`, "holds no session id"},
		{`{"session_id": "--dangerously-skip-permissions"}`, "starts with -"},
		{`{"session_id": "a\nb"}`, "control character"},
		{`{"session_id": "` + strings.Repeat("a", maxSessionID+1) + `"}`, "bytes long"},
	}
	for _, c := range bad {
		if got, err := sessionID(c.out); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("sessionID(%q) = %q, %v; want an error with %q", c.out, got, err, c.want)
		}
	}
}

// TestOperatorResult: the record's operator turns go into the result, and a login that
// revived a dropped session makes success possible again; one that found the session
// alive does not.
func TestOperatorResult(t *testing.T) {
	turn := func(done string) record.Row {
		return record.Row{Type: record.TypeOperator, Operator: &record.Operator{Turn: 1, Rule: 1, Said: "go on", Action: "login", Done: done}}
	}
	var res run.TrialResult
	operatorResult(&res, &record.Log{Rows: []record.Row{{Type: record.TypeCall}, turn(string(hub.LoginNotDropped))}})
	if len(res.Operator) != 1 || res.SuccessPossible {
		t.Errorf("a login on a live session: %+v", res)
	}
	res = run.TrialResult{}
	operatorResult(&res, &record.Log{Rows: []record.Row{turn(string(hub.LoginRevived))}})
	if len(res.Operator) != 1 || !res.SuccessPossible || res.Operator[0].Said != "go on" {
		t.Errorf("a login that revived the session: %+v", res)
	}
}

// TestOperatorTurns: RunAgent with an operator, through the real hub: a rule that always
// matches answers up to operator.turns times, each resumed run reading its session id
// from the run before (stdout.N kept per run, stdout the last one's); the record and
// result.json hold each turn. An output with no session id is recorded as a turn that
// could not resume, and the agent is not run again.
func TestOperatorTurns(t *testing.T) {
	const agent = `agent: {command: "echo '{\"session_id\": \"s0\"}'; echo please answer; echo 'STATUS: failed'", timeout: 2m}`
	cases := []struct {
		name, resume string
		runs         int      // runs of the agent, the first included
		ids          []string // the session id of each turn
		errs         bool     // the last turn could not resume
	}{
		{"two turns", `n=$(cat .n 2>/dev/null || echo 0); n=$((n+1)); echo $n >.n; echo "{\"session_id\": \"s$n\"}"; echo resumed with {operator_message} in {session_id}; echo please answer; echo 'STATUS: failed'`,
			3, []string{"s0", "s1"}, false},
		{"no session id", `echo resumed with {operator_message} in {session_id}; echo please answer; echo 'STATUS: failed'`,
			2, []string{"s0", ""}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			yaml := "name: op\ntask: t\ntools: [{name: save, effect: write}]\n" + agent + "\n" +
				"operator:\n  resume: " + quoteYAML(c.resume) + "\n  turns: 2\n  rules: [{when: please answer, reply: \"it's fine; go on\"}]\n"
			h, env := newHost(t)
			in := trialInput(t, []byte(yaml), filepath.Join(t.TempDir(), "op.yaml"), "clean", "")
			ws := must[run.Workspace](t, env, h.PrepareWorkspace, in)
			hub := must[run.HubInfo](t, env, h.StartHub, run.AgentInput{Trial: in, Workspace: ws})
			res := must[run.AgentResult](t, env, h.RunAgent, run.AgentInput{Trial: in, Workspace: ws, Hub: hub})
			result := must[run.TrialResult](t, env, h.Verify, run.VerifyInput{Trial: in, Workspace: ws, Agent: &res, CloseReason: "agent exited"})
			defer env.ExecuteActivity(h.Teardown, run.TeardownInput{Trial: in, Workspace: ws, Reason: "teardown"})
			if len(result.Operator) != len(c.ids) {
				t.Fatalf("operator turns %+v, want %d", result.Operator, len(c.ids))
			}
			for i, op := range result.Operator {
				if op.Turn != i+1 || op.Said != "it's fine; go on" || !strings.Contains(op.Asked, "please answer") {
					t.Errorf("turn %d: %+v", i+1, op)
				}
				if op.SessionID != c.ids[i] {
					t.Errorf("turn %d resumed the session %q, want %q (the one the run before printed)", i+1, op.SessionID, c.ids[i])
				}
				if last := i == len(result.Operator)-1; (op.Error != "") != (last && c.errs) {
					t.Errorf("turn %d: error %q", i+1, op.Error)
				}
			}
			for n := 0; n < c.runs-1; n++ {
				if _, err := os.Stat(filepath.Join(ws.TrialDir, fmt.Sprintf("stdout.%d", n))); err != nil {
					t.Errorf("run %d's output was not kept: %v", n, err)
				}
			}
			if _, err := os.Stat(filepath.Join(ws.TrialDir, fmt.Sprintf("stdout.%d", c.runs-1))); err == nil {
				t.Errorf("stdout.%d: the agent ran more than %d times", c.runs-1, c.runs)
			}
			last, _ := os.ReadFile(filepath.Join(ws.TrialDir, "stdout"))
			if want := c.runs > 1; strings.Contains(string(last), "resumed with it's fine; go on in s") != want {
				t.Errorf("the last run's stdout %q (want it resumed with the reply and a session: %v)", last, want)
			}
			if c.errs && !strings.Contains(result.Operator[len(result.Operator)-1].Error, "holds no session id") {
				t.Errorf("the turn that could not resume: %+v", result.Operator[len(result.Operator)-1])
			}
		})
	}
}

// quoteYAML is s as a YAML double-quoted scalar.
func quoteYAML(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
