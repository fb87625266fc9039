package spec

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Server is a real MCP server behind the wall: a stdio command or a remote URL, reached
// over streamable HTTP or (Transport "sse") the older HTTP+SSE transport. Its tools are
// found when the run is planned (upstream.Discover) and served besides the spec's
// simulated tools.
//
// Secrets are written as ${VAR} in Env and Headers (and in the URL's query) and expanded
// only where the server is reached, so the spec, the plan, the record and the process
// list hold the reference, never the value. Command, Args and Env may hold {sandbox}, the
// trial's working directory, so that each trial starts a server with its own data.
type Server struct {
	Name    string            `json:"name"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	// Transport is how a URL is reached: TransportStreamableHTTP ("" says the same) or
	// TransportSSE.
	Transport string            `json:"transport,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
	// Tools says what the spec knows of the server's tools, by the server's own tool name:
	// an effect that overrides the one read from annotations and names, and a real reply.
	Tools map[string]ServerTool `json:"tools,omitempty"`
	// Line is where the server was written, for messages.
	Line int `json:"-"`
}

// ServerTool is what a spec says of one tool of a real server.
type ServerTool struct {
	// Effect overrides the effect found from the tool's annotations, name and description.
	Effect Effect `json:"effect,omitempty"`
	// Reply and Structured are a real success reply of the tool (chaos record writes them):
	// a fabricated success looks like it before the trial has seen one of its own.
	Reply      string          `json:"reply,omitempty"`
	Structured json.RawMessage `json:"structured,omitempty"`
	// Hints override the server's own annotations of the tool, as the wall lists it.
	Hints *Hints `json:"hints,omitempty"`
}

// The transports a remote server may speak (servers[].transport).
const (
	// TransportStreamableHTTP is MCP's streamable HTTP, the default for a url.
	TransportStreamableHTTP = "streamable-http"
	// TransportSSE is the older HTTP+SSE transport: a GET that opens an event stream
	// whose first event names the endpoint the client POSTs its messages to.
	TransportSSE = "sse"
)

// Transports are the values servers[].transport takes.
var Transports = []string{TransportStreamableHTTP, TransportSSE}

// Stdio says whether the server is a command (else a URL).
func (s Server) Stdio() bool { return s.Command != "" }

// SSE says whether the server is a URL reached over the older HTTP+SSE transport.
func (s Server) SSE() bool { return !s.Stdio() && s.Transport == TransportSSE }

// ServerByName returns the server with that name, or false.
func (s *Spec) ServerByName(name string) (Server, bool) {
	for _, sv := range s.Servers {
		if sv.Name == name {
			return sv, true
		}
	}
	return Server{}, false
}

// Probe is a check of the real world after a trial: an mcp probe calls a tool of a
// server directly (never through the wall) and compares the value at a JSON path of its
// reply; a command check runs a program that prints {"problems": [...]}.
type Probe struct {
	// Kind is "mcp" or "command".
	Kind string `json:"kind"`
	// Server, Tool and Args are the call an mcp probe makes.
	Server string          `json:"server,omitempty"`
	Tool   string          `json:"tool,omitempty"`
	Args   json.RawMessage `json:"args,omitempty"`
	// Want compares the value at Want.Key, a JSON path ($.entities[0].name) of the reply's
	// structured content, else of its text read as JSON, else of the text itself ($).
	Want StateCheck `json:"want,omitzero"`
	// Command is a command check's program, run through sh -c in the sandbox.
	Command string   `json:"command,omitempty"`
	Timeout Duration `json:"timeout,omitempty"`
	// Overrules, on a command check, makes its word on the world the verdict's, both
	// ways: what the other checks say is kept beside it (chaos skill test --check).
	Overrules bool `json:"overrules,omitempty"`
	// Line is where the probe was written, for messages.
	Line int `json:"-"`
}

// Label writes a probe the way a report shows it.
func (p Probe) Label() string {
	if p.Kind == "command" {
		return "command " + p.Command
	}
	args := "{}"
	if len(p.Args) > 0 {
		args = string(p.Args)
	}
	return fmt.Sprintf("mcp %s.%s %s: %s", p.Server, p.Tool, args, p.Want.Label())
}

// Label writes a check the way the spec does: `priority equals "urgent"`.
func (c StateCheck) Label() string {
	show := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Sprint(v)
		}
		return string(b)
	}
	switch c.Op {
	case "equals":
		return c.Key + " equals " + show(c.Equals)
	case "not_equals":
		return c.Key + " not_equals " + show(c.NotEquals)
	case "contains":
		return c.Key + " contains " + show(c.Contains)
	case "matches":
		return c.Key + " matches " + show(c.Matches)
	case "absent":
		return c.Key + " is absent"
	}
	return c.Key + " " + c.Op
}

// AllProbes is every probe of every task.
func (s *Spec) AllProbes() []Probe {
	var out []Probe
	for _, t := range s.Tasks {
		out = append(out, t.Probes...)
	}
	return out
}

// ExpandSecrets replaces the ${VAR}s of v from lookup (os.LookupEnv when nil). A variable
// that is not set is an error naming it, never an empty string.
func ExpandSecrets(v string, lookup func(string) (string, bool)) (string, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	var missing []string
	out := envRef.ReplaceAllStringFunc(v, func(ref string) string {
		name := envRef.FindStringSubmatch(ref)[1]
		val, ok := lookup(name)
		if !ok {
			missing = append(missing, name)
		}
		return val
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("the environment variable %s is not set", strings.Join(missing, ", "))
	}
	return out, nil
}

// SecretRefs are the names of the ${VAR}s in v.
func SecretRefs(v string) []string {
	var out []string
	for _, m := range envRef.FindAllStringSubmatch(v, -1) {
		out = append(out, m[1])
	}
	return out
}

var (
	serverKeys     = []string{"name", "command", "args", "env", "url", "transport", "headers", "tools"}
	serverToolKeys = []string{"effect", "reply", "structured", "annotations"}
	probeKeys      = []string{"mcp", "command", "timeout", "overrules"}
	mcpProbeKeys   = append([]string{"server", "tool", "args", "path"}, stateOps...)
	sandboxToken   = regexp.MustCompile(`\{sandbox\}`)
)

// servers reads the `servers:` list.
func (d *decoder) servers(n *yaml.Node) []Server {
	var out []Server
	first := map[string]int{}
	// "type" is what an MCP client configuration (Claude Code's .mcp.json) calls it.
	hints := map[string]string{"environment": "env", "endpoint": "url", "cmd": "command", "type": "transport"}
	for it := range d.mappings(n, "servers", "server", serverKeys, hints) {
		i, item, where, f := it.i, it.node, it.where, it.f
		s := Server{
			Name:      d.text(f["name"], where+": name"),
			Command:   d.text(f["command"], where+": command"),
			Args:      d.texts(f["args"], where+": args", false),
			Env:       d.textMap(f["env"], where+": env"),
			URL:       d.text(f["url"], where+": url"),
			Transport: d.text(f["transport"], where+": transport"),
			Headers:   d.textMap(f["headers"], where+": headers"),
			Tools:     d.serverTools(f["tools"], where),
			Line:      item.Line,
		}
		switch {
		case s.Name == "":
			d.errorf(item, "server #%d has no name (it prefixes its tools' names where they collide)", i+1)
			continue
		case !toolName.MatchString(s.Name) || strings.Contains(s.Name, "__"):
			d.errorf(f["name"], "server name %q may only hold letters, digits, _, - and . (and no __)", s.Name)
		}
		if line, ok := first[s.Name]; ok {
			d.errorf(f["name"], "server %q is defined twice (first at line %d)", s.Name, line)
			continue
		}
		first[s.Name] = item.Line
		switch {
		case s.Command == "" && s.URL == "":
			d.errorf(item, "%s needs command (a stdio server) or url (a remote server)", where)
		case s.Command != "" && s.URL != "":
			d.errorf(f["url"], "%s has both command and url; give one", where)
		case s.URL != "":
			d.checkServerURL(f["url"], where, s.URL)
			if f["args"] != nil || f["env"] != nil {
				d.errorf(d.keyOf(f["args"]), "%s: args and env go with command, not url", where)
			}
			d.checkTransport(f["transport"], where, s.Transport)
		default:
			if f["headers"] != nil {
				d.errorf(d.keyOf(f["headers"]), "%s: headers go with url, not command", where)
			}
			if f["transport"] != nil {
				d.errorf(d.keyOf(f["transport"]), "%s: transport goes with url, not command (a command is a stdio server)", where)
			}
		}
		// A secret on the command line shows in the process list: it belongs in env.
		for _, w := range append([]string{s.Command}, s.Args...) {
			if refs := SecretRefs(w); len(refs) > 0 {
				d.errorf(item, "%s: ${%s} in the command line would show in the process list; pass it in env instead", where, refs[0])
				break
			}
		}
		out = append(out, s)
	}
	return out
}

// checkTransport reports a transport other than streamable-http and sse. MCP client
// configurations call streamable HTTP "http"; that gets its own suggestion.
func (d *decoder) checkTransport(n *yaml.Node, where, t string) {
	if t == "" || slices.Contains(Transports, t) {
		return
	}
	hint := suggest(t, Transports)
	switch strings.ToLower(t) {
	case "http", "https", "streamable", "streamablehttp", "streamable_http", "streamable http":
		hint = " (did you mean " + TransportStreamableHTTP + "?)"
	}
	d.errorf(n, "%s: unknown transport %q%s", where, t, hint)
}

func (d *decoder) checkServerURL(n *yaml.Node, where, raw string) {
	// ${VAR}s may stand anywhere (a token in the query); check the URL with them filled in.
	probe := envRef.ReplaceAllString(raw, "x")
	u, err := url.Parse(probe)
	switch {
	case err == nil && strings.HasPrefix(u.Scheme, "sse+") && u.Host != "":
		// The form chaos record --server takes; a spec says it with transport.
		d.errorf(n, "%s: url must be an http(s) URL; for a server that speaks SSE write %q and transport: sse", where, displayServerURL(strings.TrimPrefix(raw, "sse+")))
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		d.errorf(n, "%s: url must be an http(s) URL of an MCP endpoint, got %q", where, displayServerURL(raw))
	}
	if u != nil && u.User != nil {
		d.errorf(n, "%s: url must not hold credentials; pass them in headers as ${VAR}", where)
	}
}

// displayServerURL is a URL as messages may show it: without its query, which may hold tokens.
func displayServerURL(raw string) string {
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		return raw[:i]
	}
	return raw
}

// textMap is a mapping of text to text (env, headers).
func (d *decoder) textMap(n *yaml.Node, what string) map[string]string {
	n = deref(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%s must be a mapping of names to text, got %s", what, got(n))
		return nil
	}
	out := map[string]string{}
	for _, p := range d.pairs(n) {
		out[p.key.Value] = d.text(p.val, what+"."+p.key.Value)
	}
	return out
}

func (d *decoder) serverTools(n *yaml.Node, where string) map[string]ServerTool {
	n = deref(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%s: tools must be a mapping of tool names to {effect: write|read|none}, got %s", where, got(n))
		return nil
	}
	out := map[string]ServerTool{}
	for _, p := range d.pairs(n) {
		tw := fmt.Sprintf("%s: tool %q", where, p.key.Value)
		f := d.fields(p.val, tw, serverToolKeys, nil)
		t := ServerTool{Reply: d.jsonText(f["reply"], tw+": reply"), Hints: d.hints(f["annotations"], tw)}
		switch e := d.text(f["effect"], tw+": effect"); e {
		case "":
		case "none", "read", "write":
			t.Effect = Effect(e)
		default:
			d.errorf(f["effect"], "%s: effect must be none, read or write, got %q", tw, e)
		}
		if s := deref(f["structured"]); !isNull(s) {
			if s.Kind != yaml.MappingNode {
				d.errorf(s, "%s: structured must be a mapping (the tool's structuredContent), got %s", tw, got(s))
			} else if raw, ok := d.toJSON(s, tw+": structured"); ok {
				t.Structured = raw
			}
		}
		out[p.key.Value] = t
	}
	return out
}

// probes reads a `probes:` list.
func (d *decoder) probes(n *yaml.Node) []Probe {
	var out []Probe
	for _, item := range d.list(n, "probes") {
		f := d.fields(item, "probe", probeKeys, map[string]string{"cmd": "command"})
		if item.Kind != yaml.MappingNode {
			continue
		}
		p := Probe{Line: item.Line, Timeout: d.duration(f["timeout"], "probe: timeout")}
		switch {
		case f["mcp"] != nil && f["command"] != nil:
			d.errorf(item, "a probe is either mcp or command, not both")
			continue
		case f["command"] != nil:
			p.Kind, p.Command = "command", d.text(f["command"], "probe: command")
			if strings.TrimSpace(p.Command) == "" {
				d.errorf(f["command"], "probe: command is empty")
			}
			p.Overrules, _ = d.boolean(f["overrules"], "probe: overrules")
		case f["mcp"] != nil:
			if f["overrules"] != nil {
				d.errorf(f["overrules"], "probe: overrules is for a command check, not an mcp probe")
			}
			p.Kind = "mcp"
			m := d.fields(f["mcp"], "mcp probe", mcpProbeKeys, nil)
			p.Server = d.text(m["server"], "mcp probe: server")
			p.Tool = d.text(m["tool"], "mcp probe: tool")
			if a := deref(m["args"]); !isNull(a) {
				if a.Kind != yaml.MappingNode {
					d.errorf(a, "mcp probe: args must be a mapping, got %s", got(a))
				} else if raw, ok := d.toJSON(a, "mcp probe: args"); ok {
					p.Args = raw
				}
			}
			path := d.text(m["path"], "mcp probe: path")
			if path == "" {
				path = "$"
			}
			if !strings.HasPrefix(path, "$") {
				d.errorf(m["path"], "mcp probe: path must be a JSON path starting with $, got %q", path)
			}
			if p.Server == "" || p.Tool == "" {
				d.errorf(f["mcp"], "mcp probe needs server and tool")
			}
			p.Want = StateCheck{Key: path, Line: item.Line}
			p.Want.Op = d.oneOf(deref(f["mcp"]), m, "mcp probe", stateOps)
			switch p.Want.Op {
			case "equals":
				p.Want.Equals, _ = d.value(m["equals"], "mcp probe: equals")
			case "not_equals":
				p.Want.NotEquals, _ = d.value(m["not_equals"], "mcp probe: not_equals")
			case "contains":
				p.Want.Contains = d.text(m["contains"], "mcp probe: contains")
			case "matches":
				p.Want.Matches = d.regexp(m["matches"], "mcp probe: matches")
			case "absent":
				p.Want.Absent = true
			}
		default:
			d.errorf(item, "a probe needs mcp: {server, tool, args, path, equals...} or command: PROGRAM")
			continue
		}
		out = append(out, p)
	}
	return out
}

// checkProbes reports mcp probes that name a server the spec does not have.
func (d *decoder) checkProbes(tasks []Task, servers []Server) {
	names := make([]string, 0, len(servers))
	for _, s := range servers {
		names = append(names, s.Name)
	}
	sort.Strings(names)
	for _, t := range tasks {
		for _, p := range t.Probes {
			if p.Kind == "mcp" && p.Server != "" && !slices.Contains(names, p.Server) {
				d.probs = append(d.probs, Problem{File: d.file, Line: p.Line,
					Msg: fmt.Sprintf("mcp probe: unknown server %q%s", p.Server, suggest(p.Server, names))})
			}
		}
	}
}

// FillSandbox replaces {sandbox} in v with dir.
func FillSandbox(v, dir string) string {
	return sandboxToken.ReplaceAllLiteralString(v, dir)
}
