package activities

import (
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
