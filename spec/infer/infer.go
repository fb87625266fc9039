// Package infer writes an experiment spec from the record of one real run of an agent
// against real MCP servers: which tools write and which read, their real replies, and
// probes that read back what the agent wrote, each inference listed for the reader.
package infer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/crashwall/chaos/probes"
	"github.com/crashwall/chaos/proxies/upstream"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
)

// ServerName names a server from its command: the word after server- or mcp-server- in
// it (server-memory: memory), else its program's base name; made unique against taken.
func ServerName(line string, taken []string) string {
	name := "server"
	words, _ := upstream.SplitCommand(line)
	if upstream.IsServerURL(line) {
		words = []string{"remote"}
	}
	found := false
	for _, w := range words {
		base := w
		for _, part := range strings.Split(w, "/") {
			if strings.HasPrefix(part, "server-") || strings.HasPrefix(part, "mcp-server-") {
				base = part
			}
		}
		if i := strings.Index(base, "server-"); i >= 0 {
			name, found = base[i+len("server-"):], true
			break
		}
	}
	if !found {
		for _, w := range words {
			if !strings.Contains(w, "=") {
				name = strings.TrimSuffix(filepath.Base(w), filepath.Ext(w))
				break
			}
		}
	}
	name = strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r == '.' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
			return r
		}
		return '-'
	}, name)
	name = strings.ReplaceAll(name, "__", "_")
	if name == "" {
		name = "server"
	}
	out := name
	for i := 2; slices.Contains(taken, out); i++ {
		out = fmt.Sprintf("%s%d", name, i)
	}
	return out
}

// Recording is what one recorded run of the agent gives Spec.
type Recording struct {
	Name, Task string
	Argv       []string
	Servers    []spec.Server
	Classes    []upstream.Classification
	Tools      []spec.Tool
	Log        *record.Log
	Stdout     string
	Sandbox    string
	Now        time.Time
	ExitCode   int
}

// The spec chaos record writes, in the order a reader wants it.
type (
	recordedSpec struct {
		Name    string            `yaml:"name"`
		Task    string            `yaml:"task"`
		Agent   recordedAgent     `yaml:"agent"`
		Servers []recordedServer  `yaml:"servers"`
		Probes  []recordedProbe   `yaml:"probes,omitempty"`
		Claim   map[string]string `yaml:"claim,omitempty"`
	}
	recordedAgent struct {
		Command string `yaml:"command"`
		Profile string `yaml:"profile,omitempty"`
		Timeout string `yaml:"timeout,omitempty"`
	}
	recordedServer struct {
		Name      string                  `yaml:"name"`
		Command   string                  `yaml:"command,omitempty"`
		Args      []string                `yaml:"args,omitempty"`
		Env       map[string]string       `yaml:"env,omitempty"`
		URL       string                  `yaml:"url,omitempty"`
		Transport string                  `yaml:"transport,omitempty"`
		Headers   map[string]string       `yaml:"headers,omitempty"`
		Tools     map[string]recordedTool `yaml:"tools,omitempty"`
	}
	recordedTool struct {
		Effect     string `yaml:"effect"`
		Reply      string `yaml:"reply,omitempty"`
		Structured any    `yaml:"structured,omitempty"`
	}
	recordedProbe struct {
		MCP recordedMCP `yaml:"mcp"`
	}
	recordedMCP struct {
		Server   string         `yaml:"server"`
		Tool     string         `yaml:"tool"`
		Args     map[string]any `yaml:"args"`
		Path     string         `yaml:"path"`
		Equals   any            `yaml:"equals,omitempty"`
		Contains string         `yaml:"contains,omitempty"`
	}
)

// maxRecordedReply bounds a reply kept in the spec.
const maxRecordedReply = 4096

var (
	secretName = regexp.MustCompile(`(?i)(token|secret|key|password|passwd|auth|credential)`)
	statusLine = regexp.MustCompile(`(?im)^\W*STATUS:\s*(ok|partial|failed)`)
)

// Spec writes the spec of a recorded run, every inference listed at its top as a
// comment, and a one-line summary.
func Spec(in Recording) (string, string, error) {
	out, notes := buildSpec(in)
	text, err := writeSpec(out, notes, in.Now)
	if err != nil {
		return "", "", err
	}
	summary := fmt.Sprintf("%d server(s), %d tools, %d calls recorded, %d probe(s) inferred", len(in.Servers), len(in.Classes), len(in.Log.Calls()), len(out.Probes))
	return text, summary, nil
}

// buildSpec infers the spec of a recorded run and the notes that say how.
func buildSpec(in Recording) (recordedSpec, []string) {
	var notes []string
	note := func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) }
	out := recordedSpec{Name: in.Name, Task: in.Task, Agent: recordedAgent{Command: spec.JoinCommand(in.Argv), Timeout: "5m"}}
	if strings.Contains(out.Agent.Command, "agent scripted") {
		out.Agent.Profile = "scripted"
		note("the agent command runs a chaos reference agent: agent.profile is scripted")
	}
	byTool := map[string]spec.Tool{}
	for _, t := range in.Tools {
		byTool[t.Name] = t
	}
	calls := in.Log.Calls()
	called := map[string]record.Row{}
	for _, c := range calls {
		if _, ok := called[c.Tool]; !ok && !c.IsError {
			called[c.Tool] = c
		}
	}
	for _, sv := range in.Servers {
		rs := recordedServer{Name: sv.Name, Command: sv.Command, Args: sv.Args, URL: sv.URL, Transport: sv.Transport, Headers: sv.Headers, Tools: map[string]recordedTool{}}
		switch {
		case sv.Stdio():
			note("server %q: %s over stdio", sv.Name, strings.Join(append([]string{sv.Command}, sv.Args...), " "))
		case sv.SSE():
			note("server %q: %s over SSE (the older HTTP+SSE transport)", sv.Name, displayURL(sv.URL))
		default:
			note("server %q: %s over streamable HTTP", sv.Name, displayURL(sv.URL))
		}
		for _, k := range sortedMapKeys(sv.Env) {
			v := sv.Env[k]
			if rs.Env == nil {
				rs.Env = map[string]string{}
			}
			switch {
			case len(spec.SecretRefs(v)) > 0:
				rs.Env[k] = v
			case secretName.MatchString(k):
				rs.Env[k] = "${" + k + "}"
				note("env %s looks like a secret: the spec holds ${%s}, set it in the environment of chaos run", k, k)
			default:
				rs.Env[k] = v
				if strings.Contains(v, "{sandbox}") {
					note("env %s holds {sandbox}: each trial's server starts with its own data", k)
				}
			}
		}
		for _, c := range in.Classes {
			if c.Server != sv.Name {
				continue
			}
			rt := recordedTool{Effect: string(c.Effect)}
			note("%s %s (%s)", c.Tool, verbOf(c.Effect), c.From)
			if row, ok := called[c.Tool]; ok && c.Effect != spec.EffectNone {
				if len(row.Reply) <= maxRecordedReply {
					rt.Reply = unSandbox(row.Reply, in.Sandbox)
					if len(row.Structured) > 0 {
						var v any
						if json.Unmarshal([]byte(unSandbox(string(row.Structured), in.Sandbox)), &v) == nil {
							rt.Structured = v
						}
					}
					note("%s's real reply is kept: a fabricated success or stale read looks like it until the trial has its own", c.Tool)
				} else {
					note("%s's real reply (%d bytes) is too long to keep", c.Tool, len(row.Reply))
				}
			}
			rs.Tools[c.Remote] = rt
		}
		out.Servers = append(out.Servers, rs)
	}

	errorsSeen := 0
	var names []string
	for _, c := range calls {
		names = append(names, c.Tool)
		if c.IsError {
			errorsSeen++
		}
	}
	note("the agent made %d calls (%d failed): %s", len(calls), errorsSeen, strings.Join(compactNames(names), ", "))

	// Read-backs: a read after a write whose reply shows a value the write sent.
	for i, w := range calls {
		wt := byTool[w.Tool]
		if w.IsError || wt.Effect != spec.EffectWrite {
			continue
		}
		var wargs any
		json.Unmarshal(w.Args, &wargs)
		values := namingFirst(wargs)
		found := false
		for _, r := range calls[i+1:] {
			rt := byTool[r.Tool]
			if r.IsError || rt.Effect != spec.EffectRead {
				continue
			}
			doc := probes.TextDoc(r.Reply)
			if len(r.Structured) > 0 {
				var v any
				if json.Unmarshal(r.Structured, &v) == nil {
					doc = v
				}
			}
			var args map[string]any
			json.Unmarshal([]byte(unSandbox(string(r.Args), in.Sandbox)), &args)
			if args == nil {
				args = map[string]any{}
			}
			kept := 0
			for _, v := range values {
				p, exact := findValue(doc, v, "$")
				if p == "" {
					continue
				}
				m := recordedMCP{Server: rt.Server, Tool: rt.Remote, Args: args, Path: p}
				if exact {
					m.Equals = unSandbox(v, in.Sandbox)
				} else {
					m.Contains = unSandbox(v, in.Sandbox)
				}
				out.Probes = append(out.Probes, recordedProbe{MCP: m})
				note("%s read back what %s wrote: %q at %s; probe: %s.%s with the agent's arguments", r.Tool, w.Tool, unSandbox(v, in.Sandbox), p, rt.Server, rt.Remote)
				found = true
				if kept++; kept == 2 {
					break
				}
			}
			if found {
				break
			}
		}
		if !found {
			note("nothing read back what %s wrote (call %d): no probe for it; add one under probes:", w.Tool, i+1)
		}
	}
	if len(out.Probes) == 0 {
		note("no probe was inferred: the world is judged from the record alone (a swallowed write must be made again)")
	}
	if statusLine.MatchString(in.Stdout) {
		out.Claim = map[string]string{"status_field": `(?im)^\W*STATUS:\s*(ok|partial|failed)`}
		note("the agent's closing message has a STATUS: line: claim.status_field reads it")
	}
	if in.ExitCode != 0 {
		note("the agent exited with status %d in the recorded run", in.ExitCode)
	}

	return out, notes
}

// writeSpec is the spec's text: the notes as comments, then the spec. Everything a server
// or the agent said is data: the spec goes through the YAML encoder, and a note's text
// (tool names, replies) is a comment only once nothing in it can end the comment line.
func writeSpec(out recordedSpec, notes []string, now time.Time) (string, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(out); err != nil {
		return "", err
	}
	var head strings.Builder
	fmt.Fprintf(&head, "# Written by chaos record on %s from one real run of the agent.\n", now.UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&head, "# Every inference it made is below; check each before trusting the results.\n#\n")
	for _, n := range notes {
		fmt.Fprintf(&head, "# - %s\n", commentText(n))
	}
	head.WriteString("\n")
	return head.String() + b.String(), nil
}

// commentText is text that stays inside one YAML comment line: every control character
// (CR and LF among them), the line breaks YAML knows besides them (NEL, LS, PS), a byte
// order mark and invalid UTF-8 are written as Go escapes (\r, \u2028, \xff).
func commentText(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || r == '\ufeff':
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func verbOf(e spec.Effect) string {
	switch e {
	case spec.EffectWrite:
		return "writes"
	case spec.EffectRead:
		return "reads"
	}
	return "neither reads nor writes the world"
}

// compactNames writes a call sequence with repeats counted: a, b x2, c.
func compactNames(names []string) []string {
	var out []string
	for i := 0; i < len(names); {
		j := i
		for j < len(names) && names[j] == names[i] {
			j++
		}
		if j-i > 1 {
			out = append(out, fmt.Sprintf("%s x%d", names[i], j-i))
		} else {
			out = append(out, names[i])
		}
		i = j
	}
	return out
}

// textLeaves are the text values in v worth looking for in a read-back (two characters
// or more), in a stable order, each once.
func textLeaves(v any, out []string) []string {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range sortedMapKeys(x) {
			out = textLeaves(x[k], out)
		}
	case []any:
		for _, e := range x {
			out = textLeaves(e, out)
		}
	case string:
		if len(x) >= 2 && !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// namingKeys name a thing; their values identify what a write made, so probes look for them first.
var namingKeys = map[string]bool{"name": true, "title": true, "id": true, "key": true, "path": true, "slug": true, "email": true}

// namingFirst are the text values of v, those under naming keys first.
func namingFirst(v any) []string {
	var named []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range sortedMapKeys(x) {
				if s, ok := x[k].(string); ok && namingKeys[strings.ToLower(k)] && len(s) >= 2 && !slices.Contains(named, s) {
					named = append(named, s)
				}
				walk(x[k])
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	for _, s := range textLeaves(v, nil) {
		if !slices.Contains(named, s) {
			named = append(named, s)
		}
	}
	return named
}

// findValue is the JSON path of the first place in doc that holds v (exact: the value is
// v), or, for a text doc, that contains it.
func findValue(doc any, v, at string) (path string, exact bool) {
	switch x := doc.(type) {
	case map[string]any:
		for _, k := range sortedMapKeys(x) {
			step := "." + k
			if !regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`).MatchString(k) {
				b, _ := json.Marshal(k)
				step = "[" + string(b) + "]"
			}
			if p, e := findValue(x[k], v, at+step); p != "" {
				return p, e
			}
		}
	case []any:
		for i, e := range x {
			if p, ex := findValue(e, v, fmt.Sprintf("%s[%d]", at, i)); p != "" {
				return p, ex
			}
		}
	case string:
		if x == v {
			return at, true
		}
		if at == "$" && strings.Contains(x, v) {
			return at, false
		}
	}
	return "", false
}

// unSandbox writes the recorded run's working folder as {sandbox}, so a probe reads the
// trial's own.
func unSandbox(s, sandbox string) string {
	if sandbox == "" {
		return s
	}
	s = strings.ReplaceAll(s, sandbox, "{sandbox}")
	if real, err := filepath.EvalSymlinks(sandbox); err == nil && real != sandbox {
		s = strings.ReplaceAll(s, real, "{sandbox}")
	}
	return s
}

func displayURL(raw string) string {
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		return raw[:i]
	}
	return raw
}

// sortedMapKeys are the keys of a map of text keys, sorted.
func sortedMapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
