package spec

import (
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Script is one of the project's scripts answered by the twin behind the shim
// (proxies/shim): a call `python3 scripts/set_status.py R-101 shipped` whose script
// matches Path is never run; it becomes a call of the tool Name (transport "shim"),
// which the simulated world answers as it answers any tool, faults included. Each script
// is also a Tool of the spec (ScriptTool), so the fault families apply to it unchanged.
type Script struct {
	// Name is the tool the script's calls become.
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Path is a pattern (path.Match, relative to the project, `/` separated) of the
	// script a call runs: its first argument that is not a flag.
	Path string `json:"path"`
	// Launchers are the commands that run it (python3, node, bash, the script's own
	// name); default from Path's extension.
	Launchers []string `json:"launchers,omitempty"`
	// Real: a matching call runs the real script (an explicit allowance); nothing else
	// below applies.
	Real   bool   `json:"real,omitempty"`
	Effect Effect `json:"effect,omitempty"`
	// Once: the write must happen once (it books, sends or pays): a second performed call
	// with the same key is damage, a duplicate.
	Once bool `json:"once,omitempty"`
	// Args name the script's positional arguments; `--name value` and `--name=value`
	// are arguments named by their flag.
	Args []string `json:"args,omitempty"`
	// Key is the state key the call reads or writes, a template over the arguments
	// ("status/{record}").
	Key string `json:"key,omitempty"`
	// Value is what a write stores, a template (default "{value}").
	Value string `json:"value,omitempty"`
	// Stdout is what a successful call prints, a template over the arguments, {key} and
	// {value} (for a read, the value read).
	Stdout string `json:"stdout,omitempty"`
	// Failure is what a failed call prints on stderr ({error}: the failure's message);
	// exit code 1.
	Failure string `json:"failure,omitempty"`
	// SessionExpired is what a call prints on stderr when the session has ended (a 401);
	// exit code 1.
	SessionExpired string `json:"session_expired,omitempty"`
	// Adapter is a command (argv, run from the spec's folder) that answers the script's
	// calls instead of the templates, over the JSON protocol of docs/shim.md (one request
	// line, one reply line); one process per trial serves every script naming the same
	// argv. AdapterTimeout bounds one answer (default DefaultAdapterTimeout).
	Adapter        []string `json:"adapter,omitempty"`
	AdapterTimeout Duration `json:"adapter_timeout,omitempty"`
	Line           int      `json:"-"`
}

// DefaultAdapterTimeout bounds an adapter's answer to one call when the script names no
// adapter_timeout: long enough for an interpreter starved on a loaded machine.
const DefaultAdapterTimeout = Duration(2 * time.Minute)

// Default texts of a script's replies.
const (
	DefaultScriptFailure        = "error: {error}"
	DefaultScriptSessionExpired = "error: session expired, log in again ({error})"
)

// ScriptKeyArg and ScriptValueArg are the arguments of a script's tool call that carry
// the state key and the value computed from its templates.
const (
	ScriptKeyArg   = "key"
	ScriptValueArg = "value"
)

var scriptKeys = []string{"name", "description", "path", "launchers", "real", "effect", "once", "args", "key", "value", "stdout", "failure", "session_expired", "adapter", "adapter_timeout"}

var (
	launcherName = regexp.MustCompile(`^[A-Za-z0-9_.+-]+$`)
	argName      = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)
	placeholder  = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_-]*)\}`)
)

// DefaultLaunchers are the interpreters of a script by its extension.
func DefaultLaunchers(p string) []string {
	switch path.Ext(p) {
	case ".py":
		return []string{"python3", "python"}
	case ".js", ".mjs", ".cjs":
		return []string{"node"}
	case ".sh":
		return []string{"bash", "sh"}
	}
	return nil
}

// scripts reads the scripts list.
func (d *decoder) scripts(n *yaml.Node, tools []Tool) []Script {
	var out []Script
	names := map[string]bool{}
	for _, t := range tools {
		names[t.Name] = true
	}
	hints := map[string]string{"script": "path", "argv": "args", "reply": "stdout", "interpreters": "launchers"}
	for it := range d.mappings(n, "scripts", "script", scriptKeys, hints) {
		item, where, f := it.node, it.where, it.f
		s := Script{
			Name: d.text(f["name"], where+": name"), Description: d.text(f["description"], where+": description"),
			Path: d.text(f["path"], where+": path"), Launchers: d.texts(f["launchers"], where+": launchers", true),
			Args: d.texts(f["args"], where+": args", true), Key: d.text(f["key"], where+": key"),
			Value: d.text(f["value"], where+": value"), Stdout: d.text(f["stdout"], where+": stdout"),
			Failure: d.text(f["failure"], where+": failure"), SessionExpired: d.text(f["session_expired"], where+": session_expired"),
			Adapter: d.texts(f["adapter"], where+": adapter", false), AdapterTimeout: d.duration(f["adapter_timeout"], where+": adapter_timeout"),
			Line: item.Line,
		}
		s.Real, _ = d.boolean(f["real"], where+": real")
		s.Once, _ = d.boolean(f["once"], where+": once")
		switch e := d.text(f["effect"], where+": effect"); e {
		case "", "none":
			s.Effect = EffectNone
		case "read", "write":
			s.Effect = Effect(e)
		default:
			d.errorf(f["effect"], "%s: effect must be none, read or write, got %q", where, e)
		}
		if s.Path == "" {
			d.errorf(item, "%s has no path: the pattern of the script it answers for (relative to the project)", where)
		} else if _, err := path.Match(s.Path, ""); err != nil || localPath(s.Path) != "" {
			d.errorf(f["path"], "%s: path %q must be a pattern of a path inside the project (path.Match syntax)", where, s.Path)
		}
		if len(s.Launchers) == 0 {
			s.Launchers = DefaultLaunchers(s.Path)
		}
		if len(s.Launchers) == 0 {
			d.errorf(item, "%s: give its launchers (the commands that run %s: python3, node, bash or its own name)", where, s.Path)
		}
		for _, l := range s.Launchers {
			if !launcherName.MatchString(l) || l == "." || l == ".." {
				d.errorf(f["launchers"], "%s: launcher %q must be a command name (letters, digits, . _ + -)", where, l)
			}
		}
		if s.Real {
			if f["adapter"] != nil {
				d.errorf(f["adapter"], "%s: a real script runs itself: give real or adapter, not both", where)
			}
			out = append(out, s)
			continue
		}
		if f["adapter"] != nil {
			if len(s.Adapter) == 0 || strings.TrimSpace(s.Adapter[0]) == "" {
				d.errorf(f["adapter"], "%s: adapter must be a command line as a list, such as [python3, twin/adapter.py]", where)
			}
			if f["stdout"] != nil {
				d.errorf(f["stdout"], "%s: the adapter answers what the script prints: give stdout or adapter, not both", where)
			}
			if s.AdapterTimeout <= 0 {
				s.AdapterTimeout = DefaultAdapterTimeout
			}
		} else if f["adapter_timeout"] != nil {
			d.errorf(f["adapter_timeout"], "%s: adapter_timeout applies to a script with an adapter", where)
		}
		if s.Name == "" {
			d.errorf(item, "%s has no name: the tool its calls become in the record", where)
			continue
		}
		if !toolName.MatchString(s.Name) {
			d.errorf(f["name"], "script name %q may only hold letters, digits, _, - and .", s.Name)
		}
		if names[s.Name] {
			d.errorf(f["name"], "script %q has the name of a tool or another script", s.Name)
			continue
		}
		names[s.Name] = true
		for _, a := range s.Args {
			if !argName.MatchString(a) || a == ScriptKeyArg || a == "argv" {
				d.errorf(f["args"], "%s: argument name %q must be a word other than key and argv", where, a)
			}
		}
		if s.Effect != EffectNone && s.Key == "" {
			d.errorf(item, "%s: a %s needs key: the state key it touches, such as \"status/{record}\"", where, s.Effect)
		}
		if s.Once && s.Effect != EffectWrite {
			d.errorf(f["once"], "%s: once applies to a write", where)
		}
		if s.Effect == EffectWrite && s.Value == "" && len(s.Adapter) == 0 {
			s.Value = "{value}"
		}
		if s.Failure == "" {
			s.Failure = DefaultScriptFailure
		}
		if s.SessionExpired == "" {
			s.SessionExpired = DefaultScriptSessionExpired
		}
		out = append(out, s)
	}
	return out
}

// ScriptTool is the tool a script's calls become: its key and value are the arguments
// key and value (computed from the script's templates), its other arguments optional.
func ScriptTool(s Script) Tool {
	t := Tool{Name: s.Name, Description: s.Description, Effect: s.Effect}
	if s.Description == "" {
		t.Description = "the script " + s.Path + " (through the shim)"
	}
	if s.Effect != EffectNone {
		t.KeyField, t.ValueField = ScriptKeyArg, ScriptValueArg
	}
	t.InputSchema = defaultSchema(t)
	if s.Once {
		no := false
		t.Hints = &Hints{Idempotent: &no}
	}
	return t
}

// ScriptByName is the script whose calls become the tool name.
func (s *Spec) ScriptByName(name string) (Script, bool) {
	for _, sc := range s.Scripts {
		if sc.Name == name && !sc.Real {
			return sc, true
		}
	}
	return Script{}, false
}

// Launchers are every launcher the spec's scripts name, sorted, once each.
func (s *Spec) Launchers() []string {
	var out []string
	for _, sc := range s.Scripts {
		for _, l := range sc.Launchers {
			if !slices.Contains(out, l) {
				out = append(out, l)
			}
		}
	}
	slices.Sort(out)
	return out
}

// Fill replaces each {name} in template by vars[name]; an unknown name is left as written.
func Fill(template string, vars map[string]string) string {
	return placeholder.ReplaceAllStringFunc(template, func(m string) string {
		if v, ok := vars[strings.Trim(m, "{}")]; ok {
			return v
		}
		return m
	})
}

// Placeholders are the names of the {name}s in template, in order.
func Placeholders(template string) []string {
	var out []string
	for _, m := range placeholder.FindAllStringSubmatch(template, -1) {
		out = append(out, m[1])
	}
	return out
}
