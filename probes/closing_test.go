package probes

import (
	"reflect"
	"strings"
	"testing"
)

func TestExtract(t *testing.T) {
	tests := []struct {
		name           string
		profile        string
		stdout, stderr string
		exit           int
		text, infra    string
		fields         map[string]any
	}{
		{
			name:    "claude-code result",
			profile: "claude-code",
			stdout:  `{"type":"result","subtype":"success","is_error":false,"num_turns":4,"result":"Done. Priority is urgent.","total_cost_usd":0.0123,"permission_denials":[{"tool_name":"Bash"}]}`,
			text:    "Done. Priority is urgent.",
			fields:  map[string]any{"is_error": false, "cost": 0.0123, "num_turns": 4, "subtype": "success", "permission_denials": 1},
		},
		{
			name:    "claude-code invalid key",
			profile: "claude-code",
			stdout:  `{"type":"result","subtype":"success","is_error":true,"result":"Invalid API key · Please run /login","total_cost_usd":0}`,
			exit:    1,
			text:    "Invalid API key · Please run /login",
			infra:   "authentication failed",
			fields:  map[string]any{"is_error": true},
		},
		{
			name:    "claude-code rate limit",
			profile: "claude-code",
			stdout:  `{"type":"result","is_error":true,"result":"API Error: 429 {\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\"}}"}`,
			infra:   "rate limited",
			fields:  map[string]any{"is_error": true},
		},
		{
			name:    "claude-code overloaded",
			profile: "claude-code",
			stdout:  `{"type":"result","is_error":true,"result":"API Error: Overloaded"}`,
			infra:   "rate limited",
		},
		{
			name:    "claude-code error about the task is no infrastructure failure",
			profile: "claude-code",
			stdout:  `{"type":"result","subtype":"error_max_turns","is_error":true,"result":"I ran out of turns."}`,
			text:    "I ran out of turns.",
			fields:  map[string]any{"is_error": true, "subtype": "error_max_turns"},
		},
		{
			name:    "claude-code stream-json",
			profile: "claude-code",
			stdout: `{"type":"system","subtype":"init"}
{"type":"assistant","message":{"content":[{"type":"text","text":"Working on it"}]}}
{"type":"result","subtype":"success","is_error":false,"result":"All set."}`,
			text: "All set.",
		},
		{
			name:    "claude-code text output falls back to generic",
			profile: "claude-code",
			stdout:  "thinking...\n\nAll set.\n",
			text:    "All set.",
		},
		{
			name:    "codex last agent message",
			profile: "codex",
			stdout: `{"type":"thread.started","thread_id":"t1"}
{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"Let me look."}}
{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"ls","aggregated_output":"a\n"}}
{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"Done: tests pass."}}
{"type":"turn.completed","usage":{"input_tokens":10,"output_tokens":5}}`,
			text:   "Done: tests pass.",
			fields: map[string]any{"usage": map[string]any{"input_tokens": 10.0, "output_tokens": 5.0}},
		},
		{
			name:    "codex older events",
			profile: "codex",
			stdout: `{"id":"0","msg":{"type":"agent_message","message":"First."}}
{"id":"0","msg":{"type":"agent_message","message":"Renamed it everywhere."}}`,
			text: "Renamed it everywhere.",
		},
		{
			name:    "codex task_complete",
			profile: "codex",
			stdout:  `{"id":"0","msg":{"type":"task_complete","last_agent_message":"Fixed."}}`,
			text:    "Fixed.",
		},
		{
			name:    "codex auth failure",
			profile: "codex",
			stdout: `{"type":"turn.started"}
{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized: Incorrect API key provided"}}`,
			exit:   1,
			infra:  "authentication failed",
			fields: map[string]any{"turn_failed": true, "error": "unexpected status 401 Unauthorized: Incorrect API key provided"},
		},
		{
			name:    "codex rate limit error event",
			profile: "codex",
			stdout:  `{"type":"error","message":"exceeded retry limit, last status: 429 Too Many Requests"}`,
			infra:   "rate limited",
		},
		{
			name:    "codex error about the task keeps the message",
			profile: "codex",
			stdout: `{"type":"item.completed","item":{"type":"agent_message","text":"I could not finish."}}
{"type":"turn.failed","error":{"message":"stream disconnected"}}`,
			text: "I could not finish.",
		},
		{
			name:    "goose",
			profile: "goose",
			stdout: "\x1b[2mstarting session | provider: openai model: gpt-4o\x1b[0m\n" +
				"\x1b[2m    logging to /home/u/.local/share/goose/sessions/1.jsonl\x1b[0m\n" +
				"\x1b[2m    working directory: /tmp/x\x1b[0m\n\n" +
				"\x1b[36m─── update_ticket | wall ──────────\x1b[0m\nid: 42\n\n" +
				"\x1b[1mThe priority is now urgent.\x1b[0m\n",
			text: "The priority is now urgent.",
		},
		{
			name:    "generic last paragraph",
			profile: "generic",
			stdout:  "[tool] call update -> 200\n[tool] call read -> 200\n\nDone. I set it.  \n\n\n",
			text:    "Done. I set it.",
		},
		{
			name:    "generic pleasantry takes the paragraph before",
			profile: "generic",
			stdout:  "log line\n\nI couldn't save the note.\n\nLet me know if you want me to retry.\n",
			text:    "I couldn't save the note.\n\nLet me know if you want me to retry.",
		},
		{
			name:    "generic trailing note takes the paragraph before",
			profile: "generic",
			stdout:  "log line\n\nI've updated the ticket.\n\nNote: the dashboard may take a minute to refresh.\n",
			text:    "I've updated the ticket.\n\nNote: the dashboard may take a minute to refresh.",
		},
		{
			name:    "generic list takes its heading",
			profile: "generic",
			stdout:  "log line\n\n## Summary\n\n- ✅ priority set\n- ❌ note failed\n",
			text:    "## Summary\n\n- ✅ priority set\n- ❌ note failed",
		},
		{
			name:    "unknown profile reads as generic",
			profile: "aider",
			stdout:  "one\n\ntwo\n",
			text:    "two",
		},
		{
			name:    "scripted whole output",
			profile: "scripted",
			stdout:  "Done. I set priority to urgent.\n\nSTATUS: ok\n",
			text:    "Done. I set priority to urgent.\n\nSTATUS: ok",
		},
		{
			name:    "crash",
			profile: "generic",
			stderr:  "panic: runtime error: index out of range\n\ngoroutine 1 [running]:\nmain.main()\n",
			exit:    2,
			infra:   "the agent crashed (exit 2): panic: runtime error: index out of range",
		},
		{
			name:    "crash without stderr",
			profile: "claude-code",
			exit:    137,
			infra:   "the agent crashed (exit 137)",
		},
		{
			name:    "auth error on stderr",
			profile: "codex",
			stderr:  "Error: 401 Unauthorized: invalid api key\n",
			exit:    1,
			infra:   "authentication failed",
		},
		{
			name:    "rate limit on stderr, exit 0",
			profile: "goose",
			stderr:  "error: rate limit exceeded, retry later\n",
			infra:   "rate limited",
		},
		{
			name:    "stderr noise does not hide a closing message",
			profile: "generic",
			stdout:  "Done.\n",
			stderr:  "warning: retrying after 429\n",
			text:    "Done.",
		},
		{
			name:    "exit non-zero with output is no crash",
			profile: "generic",
			stdout:  "I could not finish.\n",
			exit:    1,
			text:    "I could not finish.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Extract(tt.profile, []byte(tt.stdout), []byte(tt.stderr), tt.exit)
			if tt.text != "" && c.Text != tt.text {
				t.Errorf("Text = %q, want %q", c.Text, tt.text)
			}
			if c.Infra != tt.infra {
				t.Errorf("Infra = %q, want %q", c.Infra, tt.infra)
			}
			for k, want := range tt.fields {
				if got, ok := c.Fields[k]; !ok || !sameValue(got, want) {
					t.Errorf("Fields[%q] = %#v, want %#v (fields %v)", k, got, want, c.Fields)
				}
			}
		})
	}
}

func TestLastParagraphTrims(t *testing.T) {
	if got := lastParagraph("\r\n  hello  \r\n\r\n\t\n"); got != "hello" {
		t.Errorf("lastParagraph = %q", got)
	}
	if got := lastParagraph(" \n\n "); got != "" {
		t.Errorf("lastParagraph of blanks = %q", got)
	}
	if got := gooseText([]byte("Context: ○○○○ 2% used\nreal words\n")); strings.Contains(got, "Context") {
		t.Errorf("goose context line kept: %q", got)
	}
}

// TestExtractRefused checks that the tools an agent's own output shows it refused are
// read out (a trial with any is not scored), and that refusals of tools that are not the
// wall's are not.
func TestExtractRefused(t *testing.T) {
	tests := []struct {
		name, profile, stdout string
		want                  []string
	}{
		{"claude-code, wall tools denied", "claude-code",
			`{"type":"result","subtype":"success","is_error":false,"result":"I need permission to use the ticket tools.","permission_denials":[{"tool_name":"mcp__chaos__read_email","tool_use_id":"t1","tool_input":{}},{"tool_name":"mcp__chaos__read_email","tool_use_id":"t2","tool_input":{}},{"tool_name":"Bash","tool_use_id":"t3","tool_input":{"command":"ls"}}]}`,
			[]string{"mcp__chaos__read_email"}},
		{"claude-code, only its own tools denied", "claude-code",
			`{"type":"result","subtype":"success","is_error":false,"result":"Done.","permission_denials":[{"tool_name":"Bash"}]}`, nil},
		{"claude-code stream-json", "claude-code",
			`{"type":"system","subtype":"init"}` + "\n" + `{"type":"result","subtype":"success","is_error":false,"result":"No access.","permission_denials":[{"tool_name":"mcp__chaos__update_ticket"}]}`,
			[]string{"mcp__chaos__update_ticket"}},
		{"codex, approval refused", "codex",
			`{"type":"thread.started","thread_id":"x"}` + "\n" +
				`{"type":"item.completed","item":{"id":"item_0","type":"mcp_tool_call","server":"chaos","tool":"update_ticket","arguments":{"field":"priority","value":"urgent"},"result":null,"error":{"message":"MCP tool call requires approval"},"status":"failed"}}` + "\n" +
				`{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"I could not update the ticket."}}`,
			[]string{"chaos.update_ticket"}},
		{"codex, tool call that ran", "codex",
			`{"type":"item.completed","item":{"id":"item_0","type":"mcp_tool_call","server":"chaos","tool":"read_email","arguments":{},"result":{"content":[{"type":"text","text":"{}"}]},"error":null,"status":"completed"}}` + "\n" +
				`{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"Done."}}`,
			nil},
		{"generic output that mentions approval", "generic", "This change requires approval from the team lead.\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Extract(tt.profile, []byte(tt.stdout), nil, 0)
			if !reflect.DeepEqual(c.Refused, tt.want) {
				t.Errorf("Refused = %q, want %q", c.Refused, tt.want)
			}
		})
	}
}

// TestCrashCause: a crashed agent is explained by the line that says why, not by the last
// frame of its stack trace or its interpreter's sign-off.
func TestCrashCause(t *testing.T) {
	tests := []struct{ name, stderr, want string }{
		{"node", "file:///work/agent.mjs:12\n    throw new Error(await res.text());\n    ^\n\nError: 404 page not found\n    at main (file:///work/agent.mjs:12:11)\n    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)\n\nNode.js v20.20.2\n",
			"Error: 404 page not found"},
		{"python", "Traceback (most recent call last):\n  File \"/work/agent.py\", line 3, in <module>\n    main()\nopenai.NotFoundError: Error code: 404\n",
			"openai.NotFoundError: Error code: 404"},
		{"go", "panic: connect: connection refused\n\ngoroutine 1 [running]:\nmain.main()\n\t/work/main.go:12 +0x1d\nexit status 2\n",
			"panic: connect: connection refused"},
		{"one plain line", "something odd happened\n", "something odd happened"},
		{"only frames", "    at x (y:1:2)\n", "at x (y:1:2)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Extract("generic", nil, []byte(tt.stderr), 1)
			if want := "the agent crashed (exit 1): " + tt.want; c.Infra != want {
				t.Errorf("Infra = %q, want %q", c.Infra, want)
			}
		})
	}
}
