// Package skills finds the Claude Code skills on a machine (the user's ~/.claude/skills and
// a project's .claude/skills) and the MCP servers they can use (the user's and the
// project's Claude Code MCP configuration), as chaos skill list and chaos mcp show them:
// a server wrapped by `chaos proxy` is unwrapped to the real one, and no header or
// environment value is ever shown, only ${VAR} references.
package skills

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/crashwall/chaos/within"
)

// Where a skill or a server was found.
const (
	ScopeUser    = "user"    // ~/.claude/skills, ~/.claude.json's mcpServers
	ScopeProject = "project" // .claude/skills, .mcp.json
	ScopeLocal   = "local"   // ~/.claude.json's projects[<project>].mcpServers
)

// Skill is one Claude Code skill: a folder with a SKILL.md.
type Skill struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Scope       string `json:"scope"`
	// Dir is the skill's folder (SKILL.md and what it ships).
	Dir string `json:"dir"`
	// AllowedTools is the skill's allowed-tools, as written.
	AllowedTools []string `json:"allowed_tools,omitempty"`
	// Servers names the MCP servers the skill can use: those its allowed-tools name
	// (mcp__SERVER__...), else every server configured.
	Servers []string `json:"servers"`
}

// Server is one MCP server of the Claude Code configuration, unwrapped when chaos proxy
// stands in front of it. Env and Headers hold ${VAR} references only.
type Server struct {
	Name    string            `json:"name"`
	Scope   string            `json:"scope"`
	Type    string            `json:"type"` // stdio, http, sse
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// WrappedBy says the configuration starts this server through chaos proxy serve;
	// Command and Args are then the real server's.
	WrappedBy string `json:"wrapped_by,omitempty"`
	// Hidden names the values that were written in the configuration and are shown here
	// as a ${VAR} reference instead (set that variable to pass them on).
	Hidden []string `json:"hidden,omitempty"`
	// From is the file the server was read from.
	From string `json:"from"`
}

// Found is what Discover found; Problems are files it could not read, in words.
type Found struct {
	Skills   []Skill  `json:"skills"`
	Servers  []Server `json:"servers"`
	Problems []string `json:"problems,omitempty"`
	// Refused holds the skills whose name cannot be a folder name (it holds a / or is
	// ..), by that name: why, with the SKILL.md line. They are not in Skills.
	Refused map[string]string `json:"refused,omitempty"`
}

// Options say where to look. Empty fields take the defaults noted.
type Options struct {
	// Home is the user's home (default os.UserHomeDir).
	Home string
	// Project is the project's folder (default the working directory).
	Project string
	// ProxyDir is chaos proxy's folder (<data dir>/proxy), where a wrapped server's real
	// command is kept; a wrapper naming --data-dir is looked up there instead.
	ProxyDir string
}

// Discover finds the skills and the servers.
func Discover(o Options) (Found, error) {
	var err error
	if o.Home == "" {
		if o.Home, err = os.UserHomeDir(); err != nil {
			return Found{}, fmt.Errorf("find the home folder: %w", err)
		}
	}
	if o.Project == "" {
		if o.Project, err = os.Getwd(); err != nil {
			return Found{}, err
		}
	}
	if o.Project, err = filepath.Abs(o.Project); err != nil {
		return Found{}, err
	}
	f := Found{Skills: []Skill{}, Servers: []Server{}}
	f.readSkills(filepath.Join(o.Home, ".claude", "skills"), ScopeUser)
	if filepath.Clean(o.Project) != filepath.Clean(o.Home) {
		f.readSkills(filepath.Join(o.Project, ".claude", "skills"), ScopeProject)
	}

	user := filepath.Join(o.Home, ".claude.json")
	var cfg struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
		Projects   map[string]struct {
			MCPServers map[string]json.RawMessage `json:"mcpServers"`
		} `json:"projects"`
	}
	hasUser := f.readJSON(user, &cfg)
	f.addServers(cfg.MCPServers, ScopeUser, user, o)
	project := filepath.Join(o.Project, ".mcp.json")
	var pc struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if f.readJSON(project, &pc) {
		f.addServers(pc.MCPServers, ScopeProject, project, o)
	}
	if hasUser {
		f.addServers(cfg.Projects[o.Project].MCPServers, ScopeLocal, user, o)
	}

	var all []string
	for _, s := range f.Servers {
		all = append(all, s.Name)
	}
	for i := range f.Skills {
		f.Skills[i].Servers = serversOf(f.Skills[i].AllowedTools, all)
	}
	return f, nil
}

// readSkills reads every <dir>/<name>/SKILL.md.
func (f *Found) readSkills(dir, scope string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			f.Problems = append(f.Problems, err.Error())
		}
		return
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name(), "SKILL.md")
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			f.Problems = append(f.Problems, err.Error())
			continue
		}
		sk := Skill{Name: e.Name(), Scope: scope, Dir: filepath.Join(dir, e.Name())}
		var front struct {
			Name         string `yaml:"name"`
			Description  string `yaml:"description"`
			AllowedTools any    `yaml:"allowed-tools"`
		}
		if head, ok := frontMatter(data); ok {
			if err := yaml.Unmarshal(head, &front); err != nil {
				f.Problems = append(f.Problems, fmt.Sprintf("%s: its front matter is not YAML: %v", path, err))
			}
		}
		if front.Name != "" {
			// The name becomes a folder (.claude/skills/NAME in a skill test's folder and
			// its sandboxes): one name, never a path.
			if msg := within.Name(front.Name); msg != "" {
				why := fmt.Sprintf("%s:%d: the skill's name %q %s; a skill's name is one folder name", path, nameLine(data), front.Name, msg)
				f.Problems = append(f.Problems, why)
				if f.Refused == nil {
					f.Refused = map[string]string{}
				}
				f.Refused[front.Name] = why
				continue
			}
			sk.Name = front.Name
		}
		sk.Description = strings.TrimSpace(front.Description)
		sk.AllowedTools = toolList(front.AllowedTools)
		f.Skills = append(f.Skills, sk)
	}
	sort.Slice(f.Skills, func(i, j int) bool {
		if f.Skills[i].Scope != f.Skills[j].Scope {
			return f.Skills[i].Scope > f.Skills[j].Scope // user before project
		}
		return f.Skills[i].Name < f.Skills[j].Name
	})
}

// nameLine is the line of SKILL.md that holds the front matter's name: key (0: unknown).
func nameLine(data []byte) int {
	head, ok := frontMatter(data)
	if !ok {
		return 0
	}
	var doc yaml.Node
	if yaml.Unmarshal(head, &doc) != nil || len(doc.Content) == 0 {
		return 0
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "name" {
			return m.Content[i].Line + 1 // below the --- line
		}
	}
	return 0
}

// frontMatter is the YAML between a leading --- line and the next.
func frontMatter(data []byte) ([]byte, bool) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	rest, ok := bytes.CutPrefix(data, []byte("---\n"))
	if !ok {
		if rest, ok = bytes.CutPrefix(data, []byte("---\r\n")); !ok {
			return nil, false
		}
	}
	end := bytes.Index(rest, []byte("\n---"))
	if end < 0 {
		return nil, false
	}
	return rest[:end], true
}

// toolList reads allowed-tools: a list, or one string of names split by commas or spaces.
func toolList(v any) []string {
	var out []string
	switch t := v.(type) {
	case string:
		out = strings.FieldsFunc(t, func(r rune) bool { return r == ',' || r == ' ' })
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok && strings.TrimSpace(s) != "" {
				out = append(out, strings.TrimSpace(s))
			}
		}
	}
	return out
}

// serversOf is the servers a skill's allowed-tools name (mcp__SERVER or mcp__SERVER__TOOL),
// or every server when they name none.
func serversOf(allowed, all []string) []string {
	var named []string
	for _, t := range allowed {
		rest, ok := strings.CutPrefix(t, "mcp__")
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(rest, "__")
		if name != "" && !contains(named, name) {
			named = append(named, name)
		}
	}
	if len(named) == 0 {
		named = append([]string{}, all...)
	}
	sort.Strings(named)
	return uniq(named)
}

func (f *Found) readJSON(path string, v any) bool {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if err == nil {
		err = json.Unmarshal(data, v)
	}
	if err != nil {
		f.Problems = append(f.Problems, fmt.Sprintf("%s: %v", path, err))
		return false
	}
	return true
}

// rawServer is a server entry as Claude Code writes it.
type rawServer struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

func (f *Found) addServers(m map[string]json.RawMessage, scope, from string, o Options) {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		var r rawServer
		if err := json.Unmarshal(m[name], &r); err != nil {
			f.Problems = append(f.Problems, fmt.Sprintf("%s: server %q: %v", from, name, err))
			continue
		}
		s := Server{Name: name, Scope: scope, Type: r.Type, Command: r.Command, Args: r.Args, URL: r.URL, From: from}
		if s.Type == "" {
			s.Type = "stdio"
			if s.URL != "" {
				s.Type = "http"
			}
		}
		if real, wrapper, ok := unwrap(r, o); ok {
			s.Command, s.Args, s.WrappedBy = real.Command, real.Args, wrapper
		} else if wrapper != "" {
			f.Problems = append(f.Problems, fmt.Sprintf("%s: server %q is wrapped by chaos proxy, but its real server is not set up (%s)", from, name, wrapper))
			s.WrappedBy = wrapper
		}
		s.Env, s.Hidden = references(name, "env", r.Env, s.Hidden)
		s.Headers, s.Hidden = references(name, "header", r.Headers, s.Hidden)
		if u, hidden := hideURLSecrets(s.URL); hidden {
			s.URL = u
			s.Hidden = append(s.Hidden, "url credentials")
		}
		s.URL, s.Hidden = hideQuerySecrets(name, s.URL, s.Hidden)
		// A server of the same name in a narrower scope wins, as in Claude Code (local,
		// then project, then user).
		replaced := false
		for i := range f.Servers {
			if f.Servers[i].Name == name {
				f.Servers[i], replaced = s, true
			}
		}
		if !replaced {
			f.Servers = append(f.Servers, s)
		}
	}
	sort.Slice(f.Servers, func(i, j int) bool { return f.Servers[i].Name < f.Servers[j].Name })
}

// unwrap finds the real server behind a `chaos proxy serve --name NAME [--data-dir D]`
// entry: wrapper is that command line (empty when the entry is not one).
func unwrap(r rawServer, o Options) (real rawServer, wrapper string, ok bool) {
	i := indexOf(r.Args, "proxy")
	if i < 0 || i+1 >= len(r.Args) || r.Args[i+1] != "serve" {
		return real, "", false
	}
	name, dir := "", o.ProxyDir
	for j := i + 2; j+1 < len(r.Args); j++ {
		switch r.Args[j] {
		case "--name":
			name = r.Args[j+1]
		case "--data-dir":
			dir = filepath.Join(r.Args[j+1], "proxy")
		}
	}
	wrapper = strings.Join(append([]string{filepath.Base(r.Command)}, r.Args...), " ")
	if name == "" || dir == "" {
		return real, wrapper, false
	}
	var sv struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "servers", name+".json"))
	if err != nil || json.Unmarshal(data, &sv) != nil || sv.Command == "" {
		return real, wrapper, false
	}
	return rawServer{Command: sv.Command, Args: sv.Args}, wrapper, true
}

var envRef = regexp.MustCompile(`\$\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\}`)

// references keeps values that refer to variables (${VAR}, "Bearer ${TOKEN}") and puts a
// reference of its own in place of every other value: a value written in the
// configuration may be a secret, and is never shown.
func references(server, kind string, in map[string]string, hidden []string) (map[string]string, []string) {
	if len(in) == 0 {
		return nil, hidden
	}
	out := map[string]string{}
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := in[k]
		if envRef.MatchString(v) {
			out[k] = v
			continue
		}
		out[k] = "${" + varName(server, k) + "}"
		hidden = append(hidden, kind+" "+k)
	}
	return out, hidden
}

// varName is SERVER_KEY in upper case, letters, digits and _ only.
func varName(server, key string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(server + "_" + key) {
		if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

var userinfo = regexp.MustCompile(`^([a-z][a-z0-9+.-]*://)[^/@]*@`)

// hideURLSecrets removes user:password@ from a URL.
func hideURLSecrets(u string) (string, bool) {
	if !userinfo.MatchString(u) {
		return u, false
	}
	return userinfo.ReplaceAllString(u, "${1}"), true
}

// secretKey matches a query parameter's name that is likely to carry a secret.
var secretKey = regexp.MustCompile(`(?i)(token|secret|passw|pwd|key|auth|credential|signature|^sig$|session|cookie|private)`)

// hideQuerySecrets puts a ${VAR} reference in place of the value of every query
// parameter of u whose name looks like a secret's (?token=, ?api_key=, ?password= ...),
// as references does for headers: the rest of the URL is kept byte for byte.
func hideQuerySecrets(server, u string, hidden []string) (string, []string) {
	base, query, ok := strings.Cut(u, "?")
	if !ok {
		return u, hidden
	}
	query, frag, hasFrag := strings.Cut(query, "#")
	params := strings.Split(query, "&")
	for i, p := range params {
		k, v, ok := strings.Cut(p, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		if !ok || v == "" || !secretKey.MatchString(name) || envRef.MatchString(v) {
			continue
		}
		params[i] = k + "=${" + varName(server, "query_"+name) + "}"
		hidden = append(hidden, "url query "+name)
	}
	out := base + "?" + strings.Join(params, "&")
	if hasFrag {
		out += "#" + frag
	}
	return out, hidden
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func contains(list []string, s string) bool { return indexOf(list, s) >= 0 }

func uniq(sorted []string) []string {
	out := sorted[:0]
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}
