package skilltest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/crashwall/chaos/skills"
	"github.com/crashwall/chaos/spec"
)

// WallServer is the name Claude Code knows the wall by: its tools are mcp__chaos__TOOL.
const WallServer = "chaos"

// Agent is how every trial starts Claude Code.
type Agent struct {
	// Claude is the claude program (default "claude").
	Claude string
	// Model is the model every trial uses, passed as --model and so kept in the run's
	// manifest (agent_command).
	Model string
	// AllowedTools are the tools claude -p may use without asking (AllowedTools makes them).
	AllowedTools []string
	// ThroughProxy puts the model proxy ({llm_url}) between Claude Code and its model:
	// ANTHROPIC_BASE_URL is set to it.
	ThroughProxy bool
}

// Argv is the agent command, with the tokens chaos fills in per trial. record says it
// is for the clean run (chaos record's tokens: no {llm_url}, no proxy).
func (a Agent) Argv(record bool) []string {
	claude := a.Claude
	if claude == "" {
		claude = "claude"
	}
	// claude -p may send its first request before the wall is connected, and then finds
	// no such tool; MCP_CONNECTION_NONBLOCKING=false makes it wait for its MCP servers.
	argv := []string{"env", "MCP_CONNECTION_NONBLOCKING=false"}
	if a.ThroughProxy && !record {
		argv = append(argv, "ANTHROPIC_BASE_URL={llm_url}")
	}
	argv = append(argv, claude, "-p", "{task}", "--mcp-config", "{mcp_config}", "--strict-mcp-config")
	if len(a.AllowedTools) > 0 {
		argv = append(argv, "--allowedTools", strings.Join(a.AllowedTools, ","))
	}
	argv = append(argv, "--output-format", "json")
	if a.Model != "" {
		argv = append(argv, "--model", a.Model)
	}
	return argv
}

// AllowedTools are the tools a skill's trial allows claude -p: the skill's own
// allowed-tools that are not MCP tools (Read, Bash(...)), Skill (to load it), and the
// wall's name (mcp__chaos__TOOL) of every tool of servers the skill may use: all of a
// server's when the skill names the server whole (mcp__SERVER) or names no MCP tool at
// all, else the ones it names. tools are the wall's tools (spec.Tool, with Server and
// Remote set).
func AllowedTools(sk skills.Skill, tools []spec.Tool) []string {
	out := []string{"Skill"}
	named := map[string]bool{}
	whole := map[string]bool{}
	anyMCP := false
	for _, t := range sk.AllowedTools {
		rest, ok := strings.CutPrefix(t, "mcp__")
		if !ok {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
			continue
		}
		anyMCP = true
		server, tool, found := strings.Cut(rest, "__")
		if !found || tool == "*" || tool == "" {
			whole[server] = true
			continue
		}
		named[server+"__"+tool] = true
	}
	for _, t := range tools {
		if t.Server == "" || !slices.Contains(sk.Servers, t.Server) {
			continue
		}
		remote := t.Remote
		if remote == "" {
			remote = t.Name
		}
		if !anyMCP || whole[t.Server] || named[t.Server+"__"+remote] {
			out = append(out, "mcp__"+WallServer+"__"+t.Name)
		}
	}
	return out
}

// SpecOptions is what a skill test's spec adds to the spec of its clean run.
type SpecOptions struct {
	Agent   Agent
	Timeout spec.Duration
	Plan    Plan
	Repeat  int
	// Files are the workspace's files (the skill's folder, the --with inputs), relative
	// to the spec's folder.
	Files []string
	// Check is a command run in the sandbox after each trial that prints
	// {"problems": [...]} and overrules the world verdict ("" for none).
	Check string
	// ModelUpstream is where the model proxy forwards Claude Code's calls ("" for no proxy).
	ModelUpstream string
}

// Spec is the spec of the skill test: the text chaos record inferred from the clean run
// (servers, tool effects, replies, probes, its comments) with the agent, the planned
// fault families, the repeats, the workspace, the check and the model proxy set.
func Spec(inferred string, o SpecOptions) (string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(inferred), &doc); err != nil {
		return "", fmt.Errorf("read the inferred spec: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return "", fmt.Errorf("the inferred spec is not a mapping")
	}
	top := doc.Content[0]
	agent := map[string]any{
		"command": spec.JoinCommand(o.Agent.Argv(false)),
		"profile": "claude-code",
	}
	if o.Timeout > 0 {
		agent["timeout"] = o.Timeout.String()
	}
	if err := set(top, "agent", agent); err != nil {
		return "", err
	}
	if fams := o.Plan.Families(); len(fams) > 0 {
		if err := set(top, "faults", fams); err != nil {
			return "", err
		}
	} else {
		// No condition beyond clean: a family list would generate some; an empty one means all.
		drop(top, "faults")
	}
	if len(o.Plan.Conditions) > 0 {
		// The families above generate each on every tool that takes it; only: keeps the
		// planned conditions, so that chaos run of this file runs what was planned.
		if err := set(top, "only", o.Plan.IDs()); err != nil {
			return "", err
		}
		if n := keyOf(top, "only"); n != nil {
			n.HeadComment = "The conditions chaos skill test planned (chaos run SPEC --only ... runs others)."
		}
	} else {
		drop(top, "only")
	}
	if err := set(top, "replicates", max(o.Repeat, 1)); err != nil {
		return "", err
	}
	if len(o.Files) > 0 {
		if err := set(top, "workspace", map[string]any{"files": o.Files}); err != nil {
			return "", err
		}
	}
	if o.Check != "" {
		probes := get(top, "probes")
		if probes == nil {
			if err := set(top, "probes", []any{}); err != nil {
				return "", err
			}
			probes = get(top, "probes")
		}
		var n yaml.Node
		if err := n.Encode(map[string]any{"command": o.Check, "overrules": true}); err != nil {
			return "", err
		}
		probes.Content = append(probes.Content, &n)
		probes.Style = 0
	}
	if o.ModelUpstream != "" {
		if err := set(top, "model", map[string]any{"upstream": o.ModelUpstream}); err != nil {
			return "", err
		}
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return "", err
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	return b.String(), nil
}

// keyOf is the key node of key in a mapping, or nil.
func keyOf(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i]
		}
	}
	return nil
}

// get is the value under key in a mapping, or nil.
func get(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// set puts value under key, replacing what was there (in place, keeping the key's comments).
func set(m *yaml.Node, key string, value any) error {
	var n yaml.Node
	if err := n.Encode(value); err != nil {
		return fmt.Errorf("write %s: %w", key, err)
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = &n
			return nil
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, &n)
	return nil
}

// drop removes key from a mapping.
func drop(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}

// Find is the skill of that name (the project's before the user's, as Claude Code
// prefers it) and the servers it may use, as a spec writes them.
func Find(found skills.Found, name string) (skills.Skill, []spec.Server, error) {
	var sk *skills.Skill
	var names []string
	for i := range found.Skills {
		s := &found.Skills[i]
		names = append(names, s.Name)
		if s.Name == name && (sk == nil || s.Scope == skills.ScopeProject) {
			sk = s
		}
	}
	if why, ok := found.Refused[name]; ok && sk == nil {
		return skills.Skill{}, nil, errors.New(why)
	}
	if sk == nil {
		if len(names) == 0 {
			return skills.Skill{}, nil, fmt.Errorf("no skill %q: there is no skill in ~/.claude/skills or the project's .claude/skills", name)
		}
		return skills.Skill{}, nil, fmt.Errorf("no skill %q (the skills are: %s)", name, strings.Join(names, ", "))
	}
	var servers []spec.Server
	for _, n := range sk.Servers {
		for _, sv := range found.Servers {
			if sv.Name != n || slices.ContainsFunc(servers, func(s spec.Server) bool { return s.Name == n }) {
				continue
			}
			out := spec.Server{Name: sv.Name, Command: sv.Command, Args: sv.Args, Env: sv.Env, URL: sv.URL, Headers: sv.Headers}
			if sv.Type == "sse" {
				out.Transport = spec.TransportSSE
			}
			servers = append(servers, out)
		}
	}
	if len(servers) == 0 {
		return skills.Skill{}, nil, fmt.Errorf("the skill %q uses no MCP server that Claude Code's configuration (~/.claude.json, .mcp.json) defines, so there is nothing for chaos to stand in front of", name)
	}
	return *sk, servers, nil
}
