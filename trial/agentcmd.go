package trial

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/crashwall/chaos/proxies/httpwall"
	"github.com/crashwall/chaos/proxies/stdio"
	"github.com/crashwall/chaos/spec"
)

// agentTokens are the values of an agent command's tokens in one trial: the stdio wall
// (wall), the wall at hubURL, the chaos binary bin, the task's prompt, the sandbox, the
// spec's path, and the cell's axis values. StartHub fills the real command with them and
// --dry-run a preview.
func agentTokens(wall stdio.StdioWall, bin, hubURL, prompt, sandbox, specPath string, axes map[string]string) map[string]string {
	tokens := map[string]string{
		"task":       prompt,
		"wall":       wall.Command,
		"wall_url":   hubURL,
		"mcp_config": wall.MCPConfig,
		// {codex_config}: the same server as one of Codex's -c overrides, its tools approved.
		"codex_config": wall.CodexConfig,
		// {llm_url} stands in for model.upstream: a client appends to it what it would
		// append to the upstream (the loader refuses {llm_url} without an upstream).
		"llm_url": hubURL + httpwall.ModelPrefix,
		"sandbox": sandbox,
		"spec":    specPath,
		// {chaos} is this chaos binary, for agent commands that run its reference agents.
		"chaos": bin,
	}
	for name, v := range axes {
		tokens[name] = v
	}
	return tokens
}

// fillAgentCommand is the shell text of the agent command: every token a reference to the
// environment variable that carries its value (spec.FillCommand), never the value.
func fillAgentCommand(template string, tokens map[string]string) (string, error) {
	command, probs := spec.FillCommand(template, func(name string) bool { _, ok := tokens[name]; return ok })
	if len(probs) > 0 {
		return "", fmt.Errorf("agent.command: %s", probs[0].Msg)
	}
	return command, nil
}

// Placeholders a plan shows for what only a running trial knows.
const (
	PreviewWallURL = "http://127.0.0.1:PORT"
	PreviewSandbox = "SANDBOX"
)

// AgentPreview is trial t's agent command as its shell will get it, and the variables it
// refers to with their values (VAR=value, shell-quoted for reading, in name order), the
// wall's port and the sandbox shown as PreviewWallURL and PreviewSandbox.
type AgentPreview struct {
	Command string
	Vars    []string
	// Program is the program the command starts, with a leading reference to a
	// variable read as its value, for CheckAgentExecutable.
	Program string
}

// PreviewAgentCommand is the agent command of trial t as it will run, filled in by the
// same function as the trial's. template is the command after -- or the spec's.
func PreviewAgentCommand(s *spec.Spec, t spec.TrialPlan, template, bin, specPath string) (AgentPreview, error) {
	task, err := trialTask(s, t.Task)
	if err != nil {
		return AgentPreview{}, err
	}
	wall := stdio.StdioWall{Command: stdio.WallCommand(bin, PreviewWallURL), MCPConfig: stdio.WallMCPConfig(bin, PreviewWallURL),
		CodexConfig: stdio.WallCodexConfig(bin, PreviewWallURL)}
	if relay := stdio.FindRelay(bin); relay != "" {
		sock := filepath.Join("WORKROOT", "wall-ID", "hub.sock")
		wall = stdio.StdioWall{Command: stdio.RelayCommand(relay, sock), MCPConfig: stdio.RelayMCPConfig(relay, sock),
			CodexConfig: stdio.RelayCodexConfig(relay, sock)}
	}
	tokens := agentTokens(wall, bin, PreviewWallURL, task.Prompt, PreviewSandbox, specPath, t.Axes)
	if len(s.Scripts) > 0 {
		tokens["shim_path"] = filepath.Join("WORKROOT", "shim-ID", "bin") // the script shim's launchers (shim.go)
	}
	if s.Agent.IsDocker() {
		tokens = containerTokens(task.Prompt, PreviewSandbox, t.Axes)
	}
	command, err := fillAgentCommand(template, tokens)
	if err != nil {
		return AgentPreview{}, err
	}
	p := AgentPreview{Command: command}
	for _, kv := range spec.TokenEnv(tokens) {
		name, v, _ := strings.Cut(kv, "=")
		if refersTo(command, name) {
			p.Vars = append(p.Vars, name+"="+spec.ShellQuote(v))
		}
	}
	sort.Strings(p.Vars)
	p.Program = command
	for _, kv := range spec.TokenEnv(tokens) {
		name, v, _ := strings.Cut(kv, "=")
		for _, ref := range []string{`"$` + name + `"`, `"${` + name + `}"`, "${" + name + "}", "$" + name} {
			if rest, ok := strings.CutPrefix(command, ref); ok && (rest == "" || strings.IndexByte(" \t;&|", rest[0]) >= 0) {
				p.Program = spec.ShellQuote(v) + rest
			}
		}
	}
	return p, nil
}

// refersTo says whether the shell text refers to the variable name ($NAME or ${NAME}, and
// not a longer name that starts with it).
func refersTo(text, name string) bool {
	if strings.Contains(text, "${"+name+"}") {
		return true
	}
	for i := 0; ; {
		j := strings.Index(text[i:], "$"+name)
		if j < 0 {
			return false
		}
		end := i + j + 1 + len(name)
		if end == len(text) || !isNameByte(text[end]) {
			return true
		}
		i = end
	}
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// CheckAgentExecutable says whether the program a filled-in agent command starts can be
// found where the trial will look for it: a bare name on the agent's PATH (path, the
// agent.env's PATH or this process's), a relative path in the sandbox (which holds only
// the spec's workspace.files, or an unknown checkout when workspace.repo is set), an
// absolute path as it is. A command that starts with a shell construct it cannot read
// ($VAR, a builtin, a subshell) passes: the shell decides at run time.
func CheckAgentExecutable(command string, ws spec.Workspace, path string) error {
	prog := firstProgram(command)
	if prog == "" {
		return nil
	}
	switch {
	case filepath.IsAbs(prog):
		return executable(prog)
	case strings.Contains(prog, "/"):
		if ws.Repo != "" {
			return nil // it may be in the checkout, which only the trial makes
		}
		rel := filepath.Clean(prog)
		for _, f := range ws.Files {
			f = filepath.Clean(f)
			if rel == f || strings.HasPrefix(rel, f+"/") {
				return nil // copied in from the spec's folder (PrepareWorkspace checks it exists)
			}
		}
		hint := "give its absolute path"
		if abs, err := filepath.Abs(prog); err == nil && executable(abs) == nil {
			hint = "give its absolute path (" + abs + ")"
		}
		return fmt.Errorf("the agent's program %s is looked for in the trial's sandbox, where the agent starts, and the sandbox holds only workspace.files: %s, or add it to workspace.files", prog, hint)
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		if executable(filepath.Join(dir, prog)) == nil {
			return nil
		}
	}
	return fmt.Errorf("the agent's program %s is not on PATH (%s): install it, or give its absolute path", prog, path)
}

// executable says whether p is a file that can be run.
func executable(p string) error {
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("the agent's program %s does not exist", p)
	case err != nil:
		return fmt.Errorf("the agent's program %s: %w", p, err)
	case fi.IsDir() || fi.Mode()&0o111 == 0:
		return fmt.Errorf("the agent's program %s is not an executable file", p)
	}
	return nil
}

// shellWords that are not programs on PATH, or that run the word after them.
var (
	shellBuiltins = map[string]bool{"if": true, "for": true, "while": true, "until": true, "case": true,
		"cd": true, "export": true, "set": true, "source": true, ".": true, "eval": true, "!": true,
		"{": true, "true": true, "false": true, "echo": true, "printf": true, "test": true, "[": true, "read": true, "trap": true, "ulimit": true, "umask": true}
	wrappers = map[string]bool{"exec": true, "command": true, "env": true, "nohup": true}
)

// firstProgram is the program a `sh -c` command line starts, or "" when the line starts
// with something only the shell can resolve (a variable, a substitution, a builtin).
func firstProgram(line string) string {
	wrapped := false
	for rest := line; ; {
		w, next, ok := shellWord(rest)
		if !ok || w == "" {
			return ""
		}
		rest = next
		switch {
		case isAssignment(w), wrapped && strings.HasPrefix(w, "-"):
			continue // VAR=value, or a wrapper's option, before the program
		case wrappers[w]:
			wrapped = true
			continue
		case shellBuiltins[w]:
			return ""
		}
		return w
	}
}

func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" {
		return false
	}
	for i, c := range name {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// shellWord reads the first word of s as sh would, quotes removed; ok is false when the
// word holds an expansion ($, `, a glob, ~) or s starts with an operator.
func shellWord(s string) (word, rest string, ok bool) {
	s = strings.TrimLeft(s, " \t")
	var b strings.Builder
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || strings.IndexByte(";&|<>()", c) >= 0:
			if b.Len() == 0 && i == 0 && c != ' ' && c != '\t' {
				return "", "", false
			}
			return b.String(), s[i:], true
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return "", "", false
			}
			b.WriteString(s[i+1 : i+1+end])
			i += end + 2
			continue
		case c == '"':
			i++
			for i < len(s) && s[i] != '"' {
				if s[i] == '$' || s[i] == '`' {
					return "", "", false
				}
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\\\"$`", s[i+1]) >= 0 {
					i++
				}
				b.WriteByte(s[i])
				i++
			}
			if i >= len(s) {
				return "", "", false
			}
			i++
			continue
		case c == '\\' && i+1 < len(s):
			b.WriteByte(s[i+1])
			i += 2
			continue
		case strings.IndexByte("$`*?[~", c) >= 0:
			return "", "", false
		}
		b.WriteByte(c)
		i++
	}
	return b.String(), "", true
}
