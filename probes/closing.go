package probes

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Closing is what the agent said at the end, read from its output by its profile.
type Closing struct {
	// Text is the closing message.
	Text string `json:"text"`
	// Infra names an infrastructure failure that kept the agent from working:
	// "authentication failed", "rate limited", "the agent crashed (exit 2): ...";
	// empty when none was seen. A trial with Infra set is scored no_verdict.
	Infra string `json:"infra,omitempty"`
	// Fields are values the profile read by machine: is_error, cost, num_turns...
	Fields map[string]any `json:"fields,omitempty"`
	// Refused names the tools the agent's own output shows it refused or could not run
	// (Claude Code's permission_denials, Codex's "requires approval"): a trial with any
	// never met the wall as the agent would have, and is not scored.
	Refused []string `json:"refused,omitempty"`
}

// Extract reads the closing message from an agent's output by its profile:
//
//	claude-code  the JSON of `claude -p --output-format json` (or the result line of stream-json)
//	codex        the JSONL events of `codex exec --json`: the last agent message
//	goose        terminal text without colours or goose's own banner lines: the last paragraph
//	scripted     the reference agents: the whole output, ending with a STATUS line
//	generic      the last paragraph (the default, also for an unknown profile)
//
// A profile whose output does not parse falls back to generic. Whatever the profile, an
// agent that exited non-zero without output crashed, and an authentication or rate
// limit error on stderr with no closing message is an infrastructure failure.
func Extract(profile string, stdout, stderr []byte, exitCode int) Closing {
	var c Closing
	switch profile {
	case "claude-code":
		c = claudeCode(stdout)
	case "codex":
		c = codex(stdout)
	case "goose":
		c = Closing{Text: lastParagraph(gooseText(stdout))}
	case "scripted":
		c = Closing{Text: strings.TrimSpace(string(stdout))}
	default:
		c = Closing{Text: lastParagraph(string(stdout))}
	}
	if c.Infra == "" && strings.TrimSpace(c.Text) == "" {
		if kind := infraKind(string(stderr)); kind != "" {
			c.Infra = kind
		} else if exitCode != 0 && len(bytes.TrimSpace(stdout)) == 0 {
			c.Infra = fmt.Sprintf("the agent crashed (exit %d)", exitCode)
			if line := crashCause(string(stderr)); line != "" {
				c.Infra += ": " + clip(line, 200)
			}
		}
	}
	return c
}

// approvalRE is how Codex says it refused a tool call for want of an approval.
var approvalRE = regexp.MustCompile(`(?i)requires? approval|approval (was )?(required|denied|rejected)|rejected by (the )?user`)

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

var (
	authRE = regexp.MustCompile(`(?i)\b401\b|unauthori[sz]ed|invalid[ _-]?(x-)?api[ _-]?key|incorrect api key|api key not valid|authentication|not logged in`)
	rateRE = regexp.MustCompile(`(?i)\b429\b|\b529\b|rate[ _-]?limit|too many requests|overloaded|quota exceeded|insufficient_quota`)
)

// infraKind names the infrastructure failure an error text tells of, or "".
func infraKind(text string) string {
	switch {
	case authRE.MatchString(text):
		return "authentication failed"
	case rateRE.MatchString(text):
		return "rate limited"
	}
	return ""
}

// claudeResult is the part of Claude Code's result object the judge reads.
type claudeResult struct {
	Type              string   `json:"type"`
	Subtype           string   `json:"subtype"`
	IsError           *bool    `json:"is_error"`
	Result            *string  `json:"result"`
	TotalCostUSD      *float64 `json:"total_cost_usd"`
	NumTurns          *int     `json:"num_turns"`
	PermissionDenials []struct {
		ToolName string `json:"tool_name"`
	} `json:"permission_denials"`
}

func claudeCode(stdout []byte) Closing {
	r, ok := claudeResultOf(stdout)
	if !ok {
		return Closing{Text: lastParagraph(string(stdout))}
	}
	c := Closing{Fields: map[string]any{}}
	if r.Result != nil {
		c.Text = strings.TrimSpace(*r.Result)
	}
	if r.Subtype != "" {
		c.Fields["subtype"] = r.Subtype
	}
	if r.IsError != nil {
		c.Fields["is_error"] = *r.IsError
	}
	if r.TotalCostUSD != nil {
		c.Fields["cost"] = *r.TotalCostUSD
	}
	if r.NumTurns != nil {
		c.Fields["num_turns"] = *r.NumTurns
	}
	if r.PermissionDenials != nil {
		c.Fields["permission_denials"] = len(r.PermissionDenials)
	}
	for _, d := range r.PermissionDenials {
		// Claude Code names an MCP tool mcp__<server>__<tool>; its own tools (Bash,
		// Write...) are no part of the wall, and denying them says nothing of it.
		if strings.HasPrefix(d.ToolName, "mcp__") {
			c.Refused = appendOnce(c.Refused, d.ToolName)
		}
	}
	if r.IsError != nil && *r.IsError {
		c.Infra = infraKind(c.Text)
	}
	return c
}

// claudeResultOf finds the result object: the whole output (json format) or the last
// line of type "result" (stream-json format).
func claudeResultOf(stdout []byte) (claudeResult, bool) {
	var r claudeResult
	if json.Unmarshal(bytes.TrimSpace(stdout), &r) == nil && (r.Result != nil || r.IsError != nil) {
		return r, true
	}
	found := false
	eachJSONLine(stdout, func(line []byte) {
		var x claudeResult
		if json.Unmarshal(line, &x) == nil && x.Type == "result" {
			r, found = x, true
		}
	})
	return r, found
}

// codexEvent covers both generations of `codex exec --json` events:
//
//	{"type":"item.completed","item":{"type":"agent_message","text":"..."}}
//	{"type":"turn.failed","error":{"message":"..."}}   {"type":"error","message":"..."}
//	{"id":"0","msg":{"type":"agent_message","message":"..."}}
type codexEvent struct {
	Type string `json:"type"`
	Item *struct {
		Type     string          `json:"type"`
		ItemType string          `json:"item_type"`
		Text     string          `json:"text"`
		Server   string          `json:"server"`
		Tool     string          `json:"tool"`
		Status   string          `json:"status"`
		Error    json.RawMessage `json:"error"`
		Result   json.RawMessage `json:"result"`
	} `json:"item"`
	Message string          `json:"message"`
	Error   json.RawMessage `json:"error"`
	Usage   map[string]any  `json:"usage"`
	Msg     *struct {
		Type             string `json:"type"`
		Message          string `json:"message"`
		LastAgentMessage string `json:"last_agent_message"`
	} `json:"msg"`
}

func codex(stdout []byte) Closing {
	var (
		c      = Closing{Fields: map[string]any{}}
		events int
		last   string
		errs   []string
	)
	eachJSONLine(stdout, func(line []byte) {
		var e codexEvent
		if json.Unmarshal(line, &e) != nil {
			return
		}
		events++
		if e.Item != nil && e.Item.Type == "mcp_tool_call" && approvalRE.Match(line) {
			// Codex refused the call before it left: the tool needed an approval that
			// its approval policy does not give (a tool without annotations is
			// taken as destructive).
			c.Refused = appendOnce(c.Refused, strings.Trim(e.Item.Server+"."+e.Item.Tool, "."))
		}
		switch {
		case e.Item != nil && (e.Type == "item.completed" || e.Type == "") &&
			(e.Item.Type == "agent_message" || e.Item.ItemType == "agent_message" || e.Item.ItemType == "assistant_message"):
			last = e.Item.Text
		case e.Type == "turn.failed" || e.Type == "error":
			c.Fields["turn_failed"] = true
			errs = append(errs, codexError(e))
		case e.Type == "turn.completed" && e.Usage != nil:
			c.Fields["usage"] = e.Usage
		case e.Msg != nil && e.Msg.Type == "agent_message":
			last = e.Msg.Message
		case e.Msg != nil && e.Msg.Type == "task_complete" && e.Msg.LastAgentMessage != "":
			last = e.Msg.LastAgentMessage
		case e.Msg != nil && (e.Msg.Type == "error" || e.Msg.Type == "stream_error"):
			c.Fields["turn_failed"] = true
			errs = append(errs, e.Msg.Message)
		}
	})
	if events == 0 {
		return Closing{Text: lastParagraph(string(stdout))}
	}
	c.Text = strings.TrimSpace(last)
	if len(errs) > 0 {
		c.Fields["error"] = errs[len(errs)-1]
		c.Infra = infraKind(strings.Join(errs, "\n"))
	}
	if len(c.Fields) == 0 {
		c.Fields = nil
	}
	return c
}

func codexError(e codexEvent) string {
	if e.Message != "" {
		return e.Message
	}
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(e.Error, &obj) == nil && obj.Message != "" {
		return obj.Message
	}
	var s string
	if json.Unmarshal(e.Error, &s) == nil {
		return s
	}
	return string(e.Error)
}

// eachJSONLine calls f with every line of out that looks like a JSON object.
func eachJSONLine(out []byte, f func([]byte)) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64*1024), 64<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) > 0 && line[0] == '{' {
			f(line)
		}
	}
}

var ansiRE = regexp.MustCompile(`\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])`)

// gooseNoise are the starts of lines goose prints about itself, not the agent's words.
var gooseNoise = []string{
	"starting session", "logging to", "working directory", "session id", "session:",
	"closing session", "resuming session", "goose is running", "( o)>", "context: ",
}

// gooseText is goose's terminal output without colours, its banner and log lines and
// its tool-call headers (lines of box drawing such as "─── shell | developer ───").
func gooseText(stdout []byte) string {
	text := ansiRE.ReplaceAllString(string(stdout), "")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	var keep []string
	for _, line := range strings.Split(text, "\n") {
		t := strings.ToLower(strings.TrimSpace(line))
		noise := strings.HasPrefix(t, "───") || strings.HasPrefix(t, "---") && strings.Contains(t, "|")
		for _, p := range gooseNoise {
			if strings.HasPrefix(t, p) {
				noise = true
			}
		}
		if !noise {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}

var (
	blankLinesRE = regexp.MustCompile(`\n[ \t]*\n`)
	pleasantryRE = regexp.MustCompile(`(?i)^(let me know|feel free|hope (this|that) helps|is there anything|anything else|if you (need|have|want|'d like)|happy to help|would you like|want me to|shall i|do you want)`)
	listLineRE   = regexp.MustCompile(`^\s*([-*+•]|\d+[.)]|\|)\s`)
	// noteRE starts an aside after the report: "Note: the dashboard may lag", "FYI, ...".
	noteRE = regexp.MustCompile(`(?i)^(note|nb|n\.b\.|p\.\s?s\.?|ps|fyi|caveat|one caveat)\b\s*[:.,—–-]`)
)

// lastParagraph is the last paragraph of text (paragraphs are split by blank lines),
// widened backwards over what belongs to it: a closing pleasantry ("Let me know if...")
// takes the paragraph before it along, and a list or table takes its heading or the
// line that introduces it. Agents often end a summary that way, and the pleasantry
// alone says nothing about the task. So does a trailing aside ("Note: the dashboard
// may take a minute to refresh").
func lastParagraph(text string) string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	var paras []string
	for _, p := range blankLinesRE.Split(text, -1) {
		if p = strings.TrimSpace(p); p != "" {
			paras = append(paras, p)
		}
	}
	if len(paras) == 0 {
		return ""
	}
	start := len(paras) - 1
	for start > 0 && belongsToPrevious(paras[start-1], paras[start]) {
		start--
	}
	return strings.Join(paras[start:], "\n\n")
}

func belongsToPrevious(prev, p string) bool {
	switch {
	case pleasantryRE.MatchString(p), noteRE.MatchString(p):
		return true
	case strings.HasPrefix(prev, "#"), strings.HasSuffix(prev, ":"):
		return true
	case listLineRE.MatchString(p) && (listLineRE.MatchString(prev) || strings.HasPrefix(prev, "#")):
		return true
	}
	return false
}

var (
	// frameRE is a line of a stack trace or of an interpreter's sign-off, which never
	// says why a program died: Node's "    at f (file:1:2)" and "Node.js v20.1.0", Python's
	// `  File "x.py", line 3` and "Traceback ...", Go's "goroutine 1 [running]:" and
	// "\t/path/x.go:12 +0x1d", a caret under the failing column.
	frameRE = regexp.MustCompile(`^\s+at\s|^Node\.js v\d|^\s*File ".*", line \d|^Traceback \(most recent call last\)|^goroutine \d+ \[|^\s+\S+\.go:\d+|^\s*\^+\s*$|^exit status \d+$`)
	// causeRE is a line that says what went wrong.
	causeRE = regexp.MustCompile(`(?i)error|exception|panic|fatal|failed|refused|denied|not found|no such|cannot|can't|unable|invalid|\b[45]\d\d\b`)
)

// crashCause is the line of a crashed agent's stderr that says why: the last line that
// reads as an error and is no stack frame ("Error: 404 page not found" above Node's
// "at process.processTicksAndRejections ..." lines), else its last line that is no frame,
// else its last line.
func crashCause(stderr string) string {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	fallback := ""
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimRight(lines[i], " \t\r")
		if strings.TrimSpace(l) == "" || frameRE.MatchString(l) {
			continue
		}
		if causeRE.MatchString(l) {
			return strings.TrimSpace(l)
		}
		if fallback == "" {
			fallback = strings.TrimSpace(l)
		}
	}
	if fallback != "" {
		return fallback
	}
	return lastLine(stderr)
}
