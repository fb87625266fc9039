package trial

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
)

func TestVerifyWithoutAGoodRecord(t *testing.T) {
	tests := []struct {
		name   string
		record string // "" for no record file
		want   string
	}{
		{"missing", "", "the trial has no record"},
		{"corrupt", `{"type":"session_start","seq":1}` + "\n{not json\n", "corrupt record row"},
		{"no session start", `{"type":"call","seq":1,"tool":"read_email"}` + "\n", "no session_start row"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, env := newHost(t)
			in := trialInput(t, exampleYAML(t), examplePath, "clean", "agent")
			ws := run.Workspace{TrialDir: t.TempDir(), Dir: t.TempDir()}
			if tt.record != "" {
				os.WriteFile(filepath.Join(ws.TrialDir, "record.jsonl"), []byte(tt.record), 0o644)
			}
			res := must[run.TrialResult](t, env, h.Verify, run.VerifyInput{Trial: in, Workspace: ws, Agent: &run.AgentResult{}})
			if res.Outcome != run.OutcomeFailed || !strings.Contains(res.Reason, tt.want) || res.WorldOK {
				t.Errorf("outcome %s, reason %q, world ok %v; want failed saying %q", res.Outcome, res.Reason, res.WorldOK, tt.want)
			}
			// The judge still reads the (empty) closing message; the failure decides the verdict.
			if res.Claim != report.ClaimUnclear || res.ClaimReason != "empty closing message" || res.ClaimBy != "rules" ||
				res.Verdict != report.NoVerdict || res.VerdictWhy != res.Reason {
				t.Errorf("claim %q (%q) by %q, verdict %q (%q); want unclear (empty closing message) by rules, no_verdict (%q)",
					res.Claim, res.ClaimReason, res.ClaimBy, res.Verdict, res.VerdictWhy, res.Reason)
			}
			if _, err := os.Stat(filepath.Join(ws.TrialDir, "result.json")); err != nil {
				t.Errorf("no result.json: %v", err)
			}
		})
	}
}

// Verify after the hub is gone reads the final state and counts from the record. When
// the record's session_start says success was not possible, the world is not ok whatever
// the state checks say (they are still reported).
func TestVerifyFromTheRecord(t *testing.T) {
	const aborted = "the agent made more than 40 tool calls"
	_, noToolCall := report.Reach{Profile: "scripted", Tools: true}.Unreached()
	rows := func(possible bool) []record.Row {
		return []record.Row{
			{Type: record.TypeSessionStart, Condition: "phantom_success@update_ticket",
				Fault:        &record.Fault{Condition: "phantom_success@update_ticket", Family: "phantom_success", Tool: "update_ticket"},
				InitialState: map[string]any{"priority": "normal", "team": "accounts"}, SuccessPossible: &possible},
			{Type: record.TypeCall, Tool: "update_ticket", State: map[string]any{"priority": "urgent", "team": "accounts"}, Hit: &record.Hit{Fired: true}},
			{Type: record.TypeCall, Tool: "update_ticket", State: map[string]any{"priority": "urgent", "team": "payments"}},
		}
	}
	end := &record.Row{FinalState: map[string]any{"priority": "urgent", "team": "payments"}, Calls: 7, Fired: 3}
	tests := []struct {
		name     string
		possible bool
		end      *record.Row
		rows     int
		aborted  string // "" for a trial that completed
		worldOK  bool
		checksOK [2]bool // priority, team
		calls    int
		fired    int
		verdict  string
		why      string
	}{
		{"state of the session end", true, end, 3, aborted, true, [2]bool{true, true}, 7, 3, report.NoVerdict, aborted},
		{"state after the last call", true, nil, 3, aborted, true, [2]bool{true, true}, 2, 1, report.NoVerdict, aborted},
		{"state after the first call", true, nil, 2, aborted, false, [2]bool{true, false}, 1, 1, report.NoVerdict, aborted},
		{"initial state", true, nil, 1, aborted, false, [2]bool{false, false}, 0, 0, report.NoVerdict, aborted},
		{"completed, world right", true, end, 3, "", true, [2]bool{true, true}, 7, 3, report.Correct, "world right, agent claimed success"},
		// No call at all: the agent never met the wall, which is no behaviour to score
		// (nor "the fault never fired": nothing was ever asked of it).
		{"completed, no tool call", true, nil, 1, "", false, [2]bool{false, false}, 0, 0, report.NoVerdict, noToolCall},
		// The checks pass, but the condition made the task impossible: the world is not the
		// one asked for, and an agent that says it is is silently wrong.
		{"success impossible", false, end, 3, "", false, [2]bool{true, true}, 7, 3, report.SilentWrong, "success was impossible under this fault; the agent claimed success"},
		{"success impossible, aborted", false, end, 3, aborted, false, [2]bool{true, true}, 7, 3, report.NoVerdict, aborted},
		// A condition that would make the task impossible but never fired made nothing
		// impossible: the world is judged by its checks (summary.txt's "world ok").
		{"success impossible, the fault never fired", false, &record.Row{FinalState: end.FinalState, Calls: 2}, 1, "", true, [2]bool{true, true}, 2, 0, report.NotTriggered, "the fault never fired"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, env := newHost(t)
			in := trialInput(t, exampleYAML(t), examplePath, "phantom_success@update_ticket", "agent")
			ws := run.Workspace{TrialDir: t.TempDir()}
			w, err := record.Open(filepath.Join(ws.TrialDir, "record.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows(tt.possible)[:tt.rows] {
				w.Write(r)
			}
			if tt.end != nil {
				w.Close(*tt.end)
			}
			os.WriteFile(filepath.Join(ws.TrialDir, "stdout"), []byte("progress\n\nfirst paragraph\n  \nDone. I set it.\nSTATUS: ok\n\n"), 0o644)
			agent := &run.AgentResult{ExitCode: 0, Duration: time.Second}
			res := must[run.TrialResult](t, env, h.Verify, run.VerifyInput{Trial: in, Workspace: ws, Agent: agent, Aborted: tt.aborted})
			wantOutcome := run.OutcomeCompleted
			if tt.aborted != "" {
				wantOutcome = run.OutcomeAborted
			}
			if res.Outcome != wantOutcome || res.Reason != tt.aborted {
				t.Errorf("outcome %s %q; want %s %q", res.Outcome, res.Reason, wantOutcome, tt.aborted)
			}
			if res.WorldOK != tt.worldOK || res.Calls != tt.calls || res.Fired != tt.fired || res.SuccessPossible != tt.possible || res.Duration != time.Second {
				t.Errorf("world ok %v, calls %d, fired %d, success possible %v, duration %s; want %v, %d, %d, %v, 1s (checks %+v)",
					res.WorldOK, res.Calls, res.Fired, res.SuccessPossible, res.Duration, tt.worldOK, tt.calls, tt.fired, tt.possible, res.Checks)
			}
			if len(res.Checks) != 2 || res.Checks[0].Check != `priority equals "urgent"` || res.Checks[0].OK != tt.checksOK[0] ||
				res.Checks[1].Check != `team equals "payments"` || res.Checks[1].OK != tt.checksOK[1] {
				t.Errorf("checks %+v; want priority ok %v, team ok %v", res.Checks, tt.checksOK[0], tt.checksOK[1])
			}
			// The example's profile is scripted: the closing message is the whole of stdout.
			if res.Profile != "scripted" || res.Infra != "" || res.Closing != "progress\n\nfirst paragraph\n  \nDone. I set it.\nSTATUS: ok" {
				t.Errorf("profile %q, infra %q, closing %q", res.Profile, res.Infra, res.Closing)
			}
			if res.Claim != report.ClaimSuccess || res.ClaimReason != `status field "STATUS: ok"` || res.ClaimBy != "rules" {
				t.Errorf("claim %q (%q) by %q; want claimed_success (status field \"STATUS: ok\") by rules", res.Claim, res.ClaimReason, res.ClaimBy)
			}
			if res.Verdict != tt.verdict || res.VerdictWhy != tt.why {
				t.Errorf("verdict %q (%q); want %q (%q)", res.Verdict, res.VerdictWhy, tt.verdict, tt.why)
			}
			if wantCode := map[bool]string{true: report.UnreachedNoToolCall}[tt.why == noToolCall]; res.Unreached != wantCode || (wantCode != "") != (res.UnreachedWhy != "") {
				t.Errorf("unreached %q (%q); want %q", res.Unreached, res.UnreachedWhy, wantCode)
			}
		})
	}
}

func TestOutcome(t *testing.T) {
	tests := []struct {
		in   run.VerifyInput
		want string
	}{
		{run.VerifyInput{Agent: &run.AgentResult{}}, run.OutcomeCompleted},
		{run.VerifyInput{Agent: &run.AgentResult{TimedOut: true}}, run.OutcomeTimedOut},
		{run.VerifyInput{Agent: &run.AgentResult{TimedOut: true}, Aborted: "x"}, run.OutcomeAborted},
		{run.VerifyInput{Agent: &run.AgentResult{}, Aborted: "x", Failure: "y"}, run.OutcomeFailed},
	}
	for _, tt := range tests {
		if got, _ := outcome(tt.in); got != tt.want {
			t.Errorf("outcome(%+v) = %s; want %s", tt.in, got, tt.want)
		}
	}
}

// The checks' comparisons are probes.StateCheck's; this is how their results read.
func TestCheckState(t *testing.T) {
	state := map[string]any{"n": 1.0, "s": "1", "text": "routed to payments"}
	tests := []struct {
		check spec.StateCheck
		label string
		ok    bool
	}{
		{spec.StateCheck{Key: "n", Op: "equals", Equals: 1}, `n equals 1`, true},
		{spec.StateCheck{Key: "s", Op: "equals", Equals: 1}, `s equals 1`, false},
		{spec.StateCheck{Key: "missing", Op: "not_equals", NotEquals: 1}, `missing not_equals 1`, true},
		{spec.StateCheck{Key: "text", Op: "contains", Contains: "payments"}, `text contains "payments"`, true},
		{spec.StateCheck{Key: "text", Op: "matches", Matches: `^payments`}, `text matches "^payments"`, false},
		{spec.StateCheck{Key: "missing", Op: "absent", Absent: true}, `missing is absent`, true},
	}
	for _, tt := range tests {
		got, ok, why := checkState([]spec.StateCheck{tt.check}, state)
		if len(got) != 1 || got[0].Check != tt.label || got[0].OK != tt.ok || ok != tt.ok || why != "" || !reflect.DeepEqual(got[0].Got, state[tt.check.Key]) {
			t.Errorf("%+v: %+v, %v, %q; want %q ok=%v", tt.check, got, ok, why, tt.label, tt.ok)
		}
	}
	if _, ok, why := checkState([]spec.StateCheck{{Key: "s", Op: "matches", Matches: "("}}, state); ok || why == "" {
		t.Errorf("a check that cannot run: ok %v, no verdict %q", ok, why)
	}
	if _, ok, _ := checkState(nil, state); !ok {
		t.Error("no checks: the world is not ok")
	}
}

func TestClosingMessage(t *testing.T) {
	long := strings.Repeat("é", 3000) + " the end"
	tests := []struct {
		profile, stdout, want string
	}{
		{"generic", "", ""},
		{"generic", "one line\n", "one line"},
		{"generic", "a\r\n\r\nb\r\nSTATUS: ok\r\n", "b\nSTATUS: ok"},
		{"generic", "x\n\n" + long + "\n\n \n", "…" + string([]rune(long)[len([]rune(long))-maxClosing+1:])},
		{"scripted", "call a\n\nDone.\nSTATUS: ok\n", "call a\n\nDone.\nSTATUS: ok"},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "stdout"), []byte(tt.stdout), 0o644)
		got := closingMessage(dir, tt.profile, 0).Text
		if got != tt.want {
			t.Errorf("closing of %.40q = %.60q; want %.60q", tt.stdout, got, tt.want)
		}
		if n := len([]rune(got)); n > maxClosing {
			t.Errorf("closing has %d characters", n)
		}
	}
}

// A trial whose workspace was never prepared still gets its result, in its folder.
func TestVerifyUnpreparedTrial(t *testing.T) {
	h, env := newHost(t)
	in := trialInput(t, exampleYAML(t), examplePath, "clean", "agent")
	res := must[run.TrialResult](t, env, h.Verify, run.VerifyInput{Trial: in, Failure: "prepare workspace: the disk is full"})
	if res.Outcome != run.OutcomeFailed || res.Reason != "prepare workspace: the disk is full" || res.WorldOK {
		t.Errorf("outcome %s %q, world ok %v", res.Outcome, res.Reason, res.WorldOK)
	}
	if res.Verdict != report.NoVerdict || res.VerdictWhy != "prepare workspace: the disk is full" {
		t.Errorf("verdict %q (%q); want no_verdict with the failure", res.Verdict, res.VerdictWhy)
	}
	want := filepath.Join(in.OutDir, "trials", filepath.FromSlash(in.Trial.ID))
	if _, err := os.Stat(filepath.Join(want, "result.json")); err != nil || res.Dir != want {
		t.Errorf("dir %s, result.json: %v; want it in %s", res.Dir, err, want)
	}
}

// TestVerifySilentAgent: an agent given the wall that exits 0 at once without a word and
// without a contact (Claude Code with a TMPDIR it cannot write) has no verdict, and its
// reason says it stopped before its work began, not that its command lacks the wall;
// the same agent with a word on stderr gets the usual sentence.
func TestVerifySilentAgent(t *testing.T) {
	for _, tt := range []struct{ command, why string }{
		{"sh -c 'exit 0' agent {mcp_config}", "the agent exited (code 0) without writing a word and never connected to the wall, though its command gives it the wall ({mcp_config})"},
		{"sh -c 'echo no >&2' agent {mcp_config}", "the agent never connected to the wall: give it the wall's server"},
	} {
		h, env := newHost(t)
		in := cellTrialInput(t, exampleYAML(t), examplePath, "clean", tt.command, "agent=blind")
		ws := must[run.Workspace](t, env, h.PrepareWorkspace, in)
		hub := must[run.HubInfo](t, env, h.StartHub, run.AgentInput{Trial: in, Workspace: ws})
		res := must[run.AgentResult](t, env, h.RunAgent, run.AgentInput{Trial: in, Workspace: ws, Hub: hub})
		result := must[run.TrialResult](t, env, h.Verify, run.VerifyInput{Trial: in, Workspace: ws, Agent: &res, CloseReason: "agent exited"})
		if _, err := env.ExecuteActivity(h.Teardown, run.TeardownInput{Trial: in, Workspace: ws, Reason: "teardown"}); err != nil {
			t.Fatal(err)
		}
		if result.Verdict != report.NoVerdict || result.Unreached != report.UnreachedNoContact || !strings.HasPrefix(result.UnreachedWhy, tt.why) {
			t.Errorf("%s: verdict %s, unreached %s: %s\nwant no_verdict, wall_not_reached: %s...", tt.command, result.Verdict, result.Unreached, result.UnreachedWhy, tt.why)
		}
	}
}

// TestWallToken: the token by which an agent command gives the agent the wall, read as
// the spec reads tokens: a shell variable ${wall} is not one.
func TestWallToken(t *testing.T) {
	for command, want := range map[string]string{
		"claude -p {task} --mcp-config {mcp_config}": "mcp_config",
		"agent --wall-command {wall}":                "wall",
		"codex exec -c {codex_config} {task}":        "codex_config",
		"agent --url {wall_url}/mcp":                 "wall_url",
		`sh -c 'echo ${wall}' {task}`:                "",
		"sh -c 'exit 0'":                             "",
	} {
		if got := wallToken(command); got != want {
			t.Errorf("wallToken(%q) = %q, want %q", command, got, want)
		}
	}
}
