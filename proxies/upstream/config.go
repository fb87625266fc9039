package upstream

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"sort"
	"strings"

	"github.com/crashwall/chaos/redact"
	"github.com/crashwall/chaos/spec"
)

// endpoint is a server as it is reached: the spec's server with {sandbox} filled in and
// its ${VAR}s expanded. It never leaves this process: records, messages and the process
// list see spec.Server, which holds the references.
type endpoint struct {
	server  spec.Server
	argv    []string
	env     []string // NAME=value, added to the environment of a stdio server
	url     string
	headers map[string]string
	// secrets are the expanded values of ${VAR}s and the URL's query, for redact.
	secrets []string
}

// resolve fills in {sandbox} and expands the ${VAR}s of s.
func resolve(s spec.Server, sandbox string, lookup func(string) (string, bool)) (endpoint, error) {
	e := endpoint{server: s}
	expand := func(v, what string) (string, error) {
		out, err := spec.ExpandSecrets(v, lookup)
		if err != nil {
			return "", fmt.Errorf("server %q: %s: %w", s.Name, what, err)
		}
		if len(spec.SecretRefs(v)) > 0 && out != "" {
			e.secrets = append(e.secrets, secretParts(v, out, lookup)...)
			name := strings.TrimPrefix(strings.TrimPrefix(what, "env "), "header ")
			if what == "url" {
				name = s.Name + "_url"
			}
			learn(spec.EnvName(name), v, out, lookup)
		}
		return out, nil
	}
	if s.Stdio() {
		argv := []string{spec.FillSandbox(s.Command, sandbox)}
		if len(s.Args) == 0 && strings.ContainsAny(s.Command, " \t") {
			words, err := SplitCommand(s.Command)
			if err != nil {
				return e, fmt.Errorf("server %q: command: %w", s.Name, err)
			}
			for i := range words {
				words[i] = spec.FillSandbox(words[i], sandbox)
			}
			argv = words
		}
		for _, a := range s.Args {
			argv = append(argv, spec.FillSandbox(a, sandbox))
		}
		e.argv = argv
		for _, k := range sortedKeys(s.Env) {
			v, err := expand(spec.FillSandbox(s.Env[k], sandbox), "env "+k)
			if err != nil {
				return e, err
			}
			e.env = append(e.env, k+"="+v)
		}
		return e, nil
	}
	u, err := expand(s.URL, "url")
	if err != nil {
		return e, err
	}
	if pu, err := url.Parse(u); err == nil && pu.RawQuery != "" {
		e.secrets = append(e.secrets, pu.RawQuery)
	}
	e.url = u
	e.headers = map[string]string{}
	for _, k := range sortedKeys(s.Headers) {
		v, err := expand(s.Headers[k], "header "+k)
		if err != nil {
			return e, err
		}
		e.headers[k] = v
	}
	return e, nil
}

// secretParts are the values the ${VAR}s of template took in out: each variable's value,
// and the whole when it holds one (a header "Bearer ${TOKEN}").
func secretParts(template, out string, lookup func(string) (string, bool)) []string {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	parts := []string{out}
	for _, name := range spec.SecretRefs(template) {
		if v, ok := lookup(name); ok && v != "" {
			parts = append(parts, v)
		}
	}
	return parts
}

// learn adds the values template's ${VAR}s took to redact.Known, each under its
// variable's name, and the whole out under name (a header's: AUTHORIZATION) where it
// holds text besides: every process that reaches a server (a trial's worker, chaos wall,
// chaos proxy, chaos record) writes none of them. The names are spec.Secrets'.
func learn(name, template, out string, lookup func(string) (string, bool)) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	refs := spec.SecretRefs(template)
	if template != "${"+refs[0]+"}" {
		redact.Known.Add(name, out)
	}
	for _, name := range refs {
		if v, ok := lookup(name); ok {
			redact.Known.Add(name, v)
		}
	}
}

// redactor hides secrets in text that may reach a record, a log line or a message.
type redactor []string

func (r redactor) redact(s string) string {
	for _, v := range r {
		if len(v) >= 4 {
			s = strings.ReplaceAll(s, v, "[redacted]")
		}
	}
	return s
}

// displayURL is a URL as messages show it: no credentials, no query.
func displayURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

// describeServer names a server for messages: its name and its command or URL (without query).
func describeServer(s spec.Server) string {
	if s.Stdio() {
		cmd := s.Command
		if len(s.Args) > 0 {
			cmd += " " + strings.Join(s.Args, " ")
		}
		return fmt.Sprintf("server %q (%s)", s.Name, cmd)
	}
	if s.SSE() {
		return fmt.Sprintf("server %q (%s over SSE)", s.Name, displayURL(s.URL))
	}
	return fmt.Sprintf("server %q (%s)", s.Name, displayURL(s.URL))
}

// SplitCommand splits a command line into words as a POSIX shell would for a simple
// command: blanks separate words; '...' and "..." quote; a backslash escapes.
func SplitCommand(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord, quote := false, byte(0)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case quote == '"':
			switch {
			case c == '"':
				quote = 0
			case c == '\\' && i+1 < len(line) && strings.IndexByte("\\\"$`", line[i+1]) >= 0:
				i++
				cur.WriteByte(line[i])
			default:
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
			inWord = true
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed %c in %q", quote, line)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// SSEPrefix marks a URL given on a command line as a server that speaks the older
// HTTP+SSE transport: sse+https://host/sse (in a spec: url and transport: sse).
const SSEPrefix = "sse+"

// ServerFromCommand reads a server given on a command line ("NAME=value ... cmd args", as
// `chaos record --server` takes it, an http(s) URL of a streamable HTTP server, or
// sse+http(s)://... for one that speaks SSE) into a spec server named name: leading
// NAME=value words become its environment.
func ServerFromCommand(name, line string) (spec.Server, error) {
	line = strings.TrimSpace(line)
	if IsServerURL(line) {
		if rest, ok := strings.CutPrefix(line, SSEPrefix); ok {
			return spec.Server{Name: name, URL: rest, Transport: spec.TransportSSE}, nil
		}
		return spec.Server{Name: name, URL: line}, nil
	}
	words, err := SplitCommand(line)
	if err != nil {
		return spec.Server{}, err
	}
	s := spec.Server{Name: name}
	for len(words) > 0 {
		k, v, ok := strings.Cut(words[0], "=")
		if !ok || k == "" || strings.ContainsAny(k, "/ ") {
			break
		}
		if s.Env == nil {
			s.Env = map[string]string{}
		}
		s.Env[k] = v
		words = words[1:]
	}
	if len(words) == 0 {
		return spec.Server{}, fmt.Errorf("%q has no command", line)
	}
	s.Command, s.Args = words[0], words[1:]
	return s, nil
}

// IsServerURL says whether a server given on a command line is a URL (http://, https://,
// sse+http://, sse+https://) rather than a command.
func IsServerURL(line string) bool {
	line = strings.TrimPrefix(strings.TrimSpace(line), SSEPrefix)
	return strings.HasPrefix(line, "http://") || strings.HasPrefix(line, "https://")
}

// MCPConfig is the servers as an MCP client configuration (the form Claude Code's
// .mcp.json takes), with {sandbox} filled in and the ${VAR}s left as they are written, so
// that a checker reads the system the way the agent would and no secret is written. A
// command check gets it as CHAOS_MCP_CONFIG.
func MCPConfig(servers []spec.Server, sandbox string) string {
	type entry struct {
		Type    string            `json:"type"`
		Command string            `json:"command,omitempty"`
		Args    []string          `json:"args,omitempty"`
		Env     map[string]string `json:"env,omitempty"`
		URL     string            `json:"url,omitempty"`
		Headers map[string]string `json:"headers,omitempty"`
	}
	cfg := map[string]map[string]entry{"mcpServers": {}}
	for _, s := range servers {
		if !s.Stdio() {
			typ := "http"
			if s.SSE() {
				typ = "sse"
			}
			cfg["mcpServers"][s.Name] = entry{Type: typ, URL: s.URL, Headers: s.Headers}
			continue
		}
		e := entry{Type: "stdio", Command: spec.FillSandbox(s.Command, sandbox)}
		for _, a := range s.Args {
			e.Args = append(e.Args, spec.FillSandbox(a, sandbox))
		}
		if len(s.Env) > 0 {
			e.Env = map[string]string{}
			for k, v := range s.Env {
				e.Env[k] = spec.FillSandbox(v, sandbox)
			}
		}
		cfg["mcpServers"][s.Name] = e
	}
	b, _ := json.Marshal(cfg)
	return string(b)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
