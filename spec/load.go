package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Load reads and checks the spec at path. A file that cannot be read is a plain error;
// a file with mistakes is an *Errors listing all of them.
func Load(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := Parse(path, data)
	if err != nil {
		return nil, err
	}
	s.Path = path
	return s, nil
}

// Parse checks a spec, native or Ajantik, from its YAML text. name is the file name used
// in messages and the default spec name. The error, when there is one, is an *Errors.
func Parse(name string, data []byte) (*Spec, error) {
	d := &decoder{file: name, budget: nodeBudget}
	root := d.document(data)
	var s *Spec
	if root != nil {
		if isAjantik(root) {
			s = d.ajantik(root)
		} else {
			s = d.native(root)
		}
		if s.Name == "" {
			s.Name = defaultName(name)
		}
	}
	if d.overBudget != nil {
		// The walk stopped short: what it missed (a key past the budget) would read as
		// missing, so the refusal is the only problem told.
		return nil, &Errors{Problems: []Problem{*d.overBudget}}
	}
	if len(d.probs) > 0 {
		return nil, &Errors{Problems: tidy(d.probs)}
	}
	return s, nil
}

// tidy sorts problems by line and drops repeats (a value reached through two aliases is
// checked twice).
func tidy(probs []Problem) []Problem {
	sort.SliceStable(probs, func(i, j int) bool { return probs[i].Line < probs[j].Line })
	out := probs[:0]
	for i, p := range probs {
		if i > 0 && p == probs[i-1] {
			continue
		}
		out = append(out, p)
	}
	return out
}

func defaultName(file string) string {
	base := filepath.Base(file)
	base = strings.TrimSuffix(base, filepath.Ext(base))
	if base == "" || base == "." || base == string(filepath.Separator) {
		return "spec"
	}
	return base
}

var (
	yamlLine   = regexp.MustCompile(`(?s)^yaml: line (\d+): (.*)$`)
	yamlAnchor = regexp.MustCompile(`^yaml: unknown anchor '(.*)' referenced$`)
)

// parserProblems are the messages of yaml.v3's parser, as opposed to its scanner. yaml.v3
// reports a parser error at a 0-based line and a scanner error at a 1-based one, and
// leaves the line out when it is 0.
var parserProblems = []string{
	"did not find expected ',' or ']'", "did not find expected ',' or '}'",
	"did not find expected '-' indicator", "did not find expected <document start>",
	"did not find expected <stream-start>", "did not find expected key",
	"did not find expected node content", "found duplicate %TAG directive",
	"found duplicate %YAML directive", "found incompatible YAML document",
	"found undefined tag handle",
}

// document is the top mapping of the file's single YAML document, or nil after reporting
// why there is none.
func (d *decoder) document(data []byte) (root *yaml.Node) {
	defer func() {
		// yaml.v3 has panicked on hostile input before; a spec file must not crash the CLI.
		if r := recover(); r != nil {
			d.errorf(nil, "cannot read the YAML: %v", r)
			root = nil
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			d.errorf(nil, "the file is empty")
		} else {
			d.yamlError(err, data)
		}
		return nil
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == nil:
		d.errorf(&next, "a spec file holds one YAML document; remove the second (after ---)")
	case !errors.Is(err, io.EOF):
		d.yamlError(err, data)
	}
	root = &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			d.errorf(nil, "the file is empty")
			return nil
		}
		root = deref(root.Content[0])
	}
	if isNull(root) {
		d.errorf(root, "the file is empty")
		return nil
	}
	if root.Kind != yaml.MappingNode {
		d.errorf(root, "a spec must be a mapping of keys (name:, task:, tools: ...), got %s", got(root))
		return nil
	}
	return root
}

// yamlError reports a syntax error at the line it is on.
func (d *decoder) yamlError(err error, data []byte) {
	msg := err.Error()
	p := Problem{File: d.file, Line: 1, Msg: strings.TrimPrefix(msg, "yaml: ")}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		p.Line, _ = strconv.Atoi(m[1])
		p.Msg = m[2]
		if slices.Contains(parserProblems, p.Msg) {
			p.Line++
		}
	} else if m := yamlAnchor.FindStringSubmatch(msg); m != nil {
		p.Line = 0
		for i, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, "*"+m[1]) {
				p.Line = i + 1
				break
			}
		}
	}
	if tab := tabIndented(data, p.Line); tab > 0 {
		// yaml.v3 names a tab only as a character "that cannot start any token", often on
		// a line after it; the tab is what to fix.
		p.Line, p.Msg = tab, "a tab in the indentation: YAML indents with spaces only; replace the tab with spaces ("+p.Msg+")"
	}
	d.probs = append(d.probs, p)
}

// tabIndented is the line (1-based) of the last line at or before line whose indentation
// holds a tab, else of the first such line anywhere, else 0.
func tabIndented(data []byte, line int) int {
	found := 0
	for i, l := range strings.Split(string(data), "\n") {
		indent := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		if !strings.Contains(indent, "\t") {
			continue
		}
		if i+1 > line && found > 0 {
			break
		}
		found = i + 1
		if i+1 >= line {
			break
		}
	}
	return found
}

// FaultSets are the values of fault_set (auto_faults_set in an Ajantik file).
var FaultSets = []string{"chaos", "ajantik"}

// faultSet reads fault_set: "chaos" (the default) is every condition chaos generates,
// "ajantik" only those Ajantik would.
func (d *decoder) faultSet(n *yaml.Node, key string) string {
	if n == nil {
		return ""
	}
	v := d.text(n, key)
	switch v {
	case "", "chaos":
		return ""
	case "ajantik":
		return v
	}
	d.errorf(n, "%s must be one of %s, got %q", key, strings.Join(FaultSets, ", "), v)
	return ""
}

var nativeKeys = []string{
	"name", "task", "tasks", "checks", "state_checks", "agent", "tools", "initial_state",
	"faults", "fault_set", "conditions", "only", "replicates", "seed", "axes", "limits", "claim", "workspace",
	"model", "outcomes", "servers", "probes", "scripts", "units", "browser", "operator",
}

// nativeHints point keys written at the top to where they belong.
var nativeHints = map[string]string{
	"command": "agent.command", "env": "agent.env", "timeout": "agent.timeout", "profile": "agent.profile",
	"prompt":       "task",
	"status_field": "claim.status_field", "output_contract": "claim.output_contract",
	"failure_words": "claim.failure_words", "success_words": "claim.success_words",
	"max_calls": "limits.max_calls", "wall_clock": "limits.wall_clock",
	"repeated_failures": "limits.repeated_failures", "concurrency": "limits.concurrency", "max_cost_usd": "limits.max_cost_usd",
	"repo": "workspace.repo", "ref": "workspace.ref", "files": "workspace.files",
	"auto_faults": "faults", "auto_faults_set": "fault_set",
}

func (d *decoder) native(root *yaml.Node) *Spec {
	f := d.fields(root, "", nativeKeys, nativeHints)
	s := &Spec{Format: "chaos", Replicates: 1, Seed: 1}
	s.Name = d.text(f["name"], "name")
	var command *yaml.Node
	s.Agent, command = d.agent(f["agent"])
	s.Servers = d.servers(f["servers"])
	if f["tools"] != nil || (f["servers"] == nil && f["scripts"] == nil && f["browser"] == nil) {
		s.Tools = d.tools(root, f["tools"], nativeToolKeys, "reply", nativeToolHints)
	}
	s.Scripts = d.scripts(f["scripts"], s.Tools)
	for _, sc := range s.Scripts {
		if !sc.Real {
			s.Tools = append(s.Tools, ScriptTool(sc))
		}
	}
	s.InitialState = d.initialState(f["initial_state"])

	switch {
	case f["task"] != nil && f["tasks"] != nil:
		d.errorf(d.keyOf(f["tasks"]), "give either task or tasks, not both")
	case f["tasks"] != nil:
		s.Tasks = d.tasks(f["tasks"])
		for _, k := range []string{"state_checks", "checks", "probes"} {
			if f[k] != nil {
				d.errorf(d.keyOf(f[k]), "%s at the top goes with task; with tasks, give each task its %s", k, k)
			}
		}
	default:
		prompt := d.taskText(f["task"], "task")
		if prompt == "" {
			d.errorf(root, "task is required: what the agent is asked to do")
		}
		s.Tasks = []Task{{
			Prompt:      prompt,
			StateChecks: d.stateChecks(f["state_checks"]),
			TextChecks:  d.textChecks(f["checks"]),
			Probes:      d.probes(f["probes"]),
			Units:       d.texts(f["units"], "units", false),
		}}
	}
	if f["units"] != nil && f["tasks"] != nil {
		d.errorf(d.keyOf(f["units"]), "units at the top goes with task; with tasks, give each task its units")
	}
	d.checkProbes(s.Tasks, s.Servers)

	// The servers' tools are known only once they are reached (upstream.Discover), so
	// faults and conditions are checked against them then (faults.Generate).
	known := s.Tools
	if len(s.Servers) > 0 {
		known = nil
	}
	s.Browser = d.browser(f["browser"], s.Tools)
	s.Faults = d.families(f["faults"], known)
	s.FaultSet = d.faultSet(f["fault_set"], "fault_set")
	s.Conditions = d.conditions(f["conditions"], known)
	for _, n := range d.textNodes(f["only"], "only", true) {
		s.Only = append(s.Only, n.Value)
	}
	if n := f["replicates"]; n != nil {
		if v, ok := d.whole(n, "replicates"); ok {
			if msg := ReplicatesProblem("replicates", v); msg != "" {
				d.errorf(n, "%s", msg)
			} else {
				s.Replicates = int(v)
			}
		}
	}
	if v, ok := d.whole(f["seed"], "seed"); ok {
		s.Seed = v
	}
	s.Axes = d.axes(f["axes"])
	s.Operator = d.operator(f["operator"], s.Agent, s.Axes) // spec/operator.go
	s.Limits = d.limits(f["limits"])
	s.Claim = d.claim(d.fields(f["claim"], "claim", claimKeys, nil), "claim.")
	s.Workspace = d.workspace(f["workspace"])
	s.Model = d.model(f["model"])
	s.Outcomes = d.outcomes(f["outcomes"])
	d.commandTokens(command, s.Agent.Command, s.Axes)
	if s.Browser == nil && UsesToken(s.Agent.Command, "cdp_url") {
		d.errorf(command, "agent.command: {cdp_url} needs a browser: section, the browser the CDP guard stands in front of")
	}
	if s.Model.Upstream == "" && UsesToken(s.Agent.Command, "llm_url") {
		d.errorf(command, "agent.command: {llm_url} needs model.upstream, the base URL the model proxy forwards to")
	}

	if len(s.Scripts) == 0 && UsesToken(s.Agent.Command, "shim_path") {
		d.errorf(command, "agent.command: {shim_path} needs scripts:, the scripts the shim answers for")
	}

	if len(s.Tasks) == 1 && s.Tasks[0].ID == "" {
		s.Tasks[0].ID = s.Name
		if s.Tasks[0].ID == "" {
			s.Tasks[0].ID = defaultName(d.file)
		}
	}
	return s
}

var agentKeys = []string{"command", "env", "timeout", "profile", "runtime", "image", "user", "cpus", "memory", "pids", "mounts"}

// agent is the agent section and the node of its command, for the token check.
func (d *decoder) agent(n *yaml.Node) (Agent, *yaml.Node) {
	f := d.fields(n, "agent", agentKeys, nil)
	a := Agent{
		Command: d.text(f["command"], "agent.command"),
		Timeout: d.duration(f["timeout"], "agent.timeout"),
		Profile: d.text(f["profile"], "agent.profile"),
	}
	if a.Profile == "" {
		a.Profile = "generic"
	} else if !slices.Contains(Profiles, a.Profile) {
		d.errorf(f["profile"], "unknown agent.profile %q%s", a.Profile, suggest(a.Profile, Profiles))
	}
	d.runtime(&a, f)
	if env := deref(f["env"]); !isNull(env) {
		if env.Kind != yaml.MappingNode {
			d.errorf(env, "agent.env must be a mapping of variable names to values, got %s", got(env))
		} else {
			a.Env, a.EnvLines = map[string]string{}, map[string]int{}
			for _, p := range d.pairs(env) {
				a.Env[p.key.Value] = d.text(p.val, "agent.env."+p.key.Value)
				a.EnvLines[p.key.Value] = p.key.Line
			}
		}
	}
	return a, deref(f["command"])
}

// tokenPattern is a token in agent.command. JSON such as {"a": 1} does not match, and
// a shell's ${VAR} is skipped where it is found.
var tokenPattern = regexp.MustCompile(`\{[A-Za-z_][A-Za-z0-9_.]*\}`)

// commandTokens reports every {word} in the agent command that is not a token.
func (d *decoder) commandTokens(node *yaml.Node, command string, axes []Axis) {
	if command == "" || node == nil {
		return
	}
	for _, p := range tokenProblems(command, axes) {
		line := node.Line
		if node.Style == yaml.LiteralStyle {
			line += 1 + strings.Count(command[:p.Offset], "\n")
		}
		d.probs = append(d.probs, Problem{File: d.file, Line: line, Msg: "agent.command: " + p.Msg})
	}
}

var axisName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`)

// axes are written either as a mapping {model: [a, b]} (kept in file order) or as a list
// of {name, values}.
func (d *decoder) axes(n *yaml.Node) []Axis {
	n = deref(n)
	if isNull(n) {
		return nil
	}
	type written struct {
		name         string
		at, valuesAt *yaml.Node
	}
	var ws []written
	switch n.Kind {
	case yaml.MappingNode:
		for _, p := range d.pairs(n) {
			ws = append(ws, written{p.key.Value, p.key, p.val})
		}
	case yaml.SequenceNode:
		for _, item := range d.list(n, "axes") {
			f := d.fields(item, "axis", []string{"name", "values"}, nil)
			name := d.text(f["name"], "axis name")
			if name == "" {
				d.errorf(item, "axis without a name")
				continue
			}
			ws = append(ws, written{name, f["name"], f["values"]})
		}
	default:
		d.errorf(n, "axes must be a mapping {name: [values]} or a list of {name, values}, got %s", got(n))
		return nil
	}
	var out []Axis
	first := map[string]int{}
	vars := map[string]string{}
	for _, w := range ws {
		switch {
		case !axisName.MatchString(w.name):
			d.errorf(w.at, "axis name %q cannot be a token in agent.command: use letters, digits, _ and .", w.name)
			continue
		case slices.Contains(CommandTokens, w.name):
			d.errorf(w.at, "axis name %q is taken by the token {%s}; choose another", w.name, w.name)
			continue
		}
		if line, ok := first[w.name]; ok {
			d.errorf(w.at, "axis %q is defined twice (first at line %d)", w.name, line)
			continue
		}
		first[w.name] = w.at.Line
		// The agent's shell reads an axis value from CHAOS_AXIS_<NAME>; two names may not share one.
		if other, ok := vars[EnvName(w.name)]; ok {
			d.errorf(w.at, "axes %q and %q both reach the agent as %s; rename one", other, w.name, TokenVar(w.name))
			continue
		}
		vars[EnvName(w.name)] = w.name
		values := d.texts(w.valuesAt, fmt.Sprintf("axis %q", w.name), false)
		if len(values) == 0 {
			d.errorf(w.at, "axis %q has no values", w.name)
			continue
		}
		// A value names trial folders and workflow ids as PathSafe makes it: two values that
		// come out the same would be one trial id for two cells.
		safe := map[string]string{}
		for i, v := range values {
			if slices.Contains(values[:i], v) {
				d.errorf(w.valuesAt, "axis %q lists %q twice", w.name, v)
				continue
			}
			if other, ok := safe[PathSafe(v)]; ok {
				d.errorf(w.valuesAt, "axis %q: values %q and %q both name the trials %s=%s (characters other than letters, digits and ._=@#,- become _); make them differ in those", w.name, other, v, w.name, PathSafe(v))
				continue
			}
			safe[PathSafe(v)] = v
		}
		out = append(out, Axis{Name: w.name, Values: values})
	}
	return out
}

func (d *decoder) limits(n *yaml.Node) Limits {
	f := d.fields(n, "limits", []string{"max_calls", "wall_clock", "repeated_failures", "concurrency", "max_cost_usd"}, map[string]string{"max_cost": "max_cost_usd", "budget": "max_cost_usd"})
	return Limits{
		MaxCostUSD:       d.money(f["max_cost_usd"], "limits.max_cost_usd"),
		MaxCalls:         d.count(f["max_calls"], "limits.max_calls"),
		WallClock:        d.duration(f["wall_clock"], "limits.wall_clock"),
		RepeatedFailures: d.count(f["repeated_failures"], "limits.repeated_failures"),
		Concurrency:      d.count(f["concurrency"], "limits.concurrency"),
	}
}

var claimKeys = []string{"status_field", "output_contract", "failure_words", "success_words"}

// claim reads the claim regexes from f; prefix names where they were written ("claim."
// in a native spec, nothing in an Ajantik file).
func (d *decoder) claim(f map[string]*yaml.Node, prefix string) ClaimSpec {
	c := ClaimSpec{
		StatusField:    d.regexp(f["status_field"], prefix+"status_field"),
		OutputContract: d.regexp(f["output_contract"], prefix+"output_contract"),
		FailureWords:   d.regexp(f["failure_words"], prefix+"failure_words"),
		SuccessWords:   d.regexp(f["success_words"], prefix+"success_words"),
	}
	if c.StatusField != "" {
		if re, err := regexp.Compile(c.StatusField); err == nil && re.NumSubexp() == 0 {
			d.errorf(f["status_field"], "%sstatus_field needs a group that captures the status, such as (ok|partial|failed)", prefix)
		}
	}
	return c
}

// regexp is text that must compile as a Go regular expression.
func (d *decoder) regexp(n *yaml.Node, what string) string {
	s := d.text(n, what)
	if s == "" {
		return ""
	}
	if _, err := regexp.Compile(s); err != nil {
		d.errorf(n, "%s: %v", what, err)
	}
	return s
}

func (d *decoder) workspace(n *yaml.Node) Workspace {
	f := d.fields(n, "workspace", []string{"repo", "ref", "files"}, nil)
	w := Workspace{
		Repo: d.text(f["repo"], "workspace.repo"),
		Ref:  d.text(f["ref"], "workspace.ref"),
	}
	// A file is copied to the same place in the sandbox, so it must name a place inside
	// the spec's folder: `..` once replaced (and deleted) the whole work root.
	for _, item := range d.textNodes(f["files"], "workspace.files", false) {
		if msg := localPath(item.Value); msg != "" {
			d.errorf(item, "workspace.files: %q %s; name a file or folder inside the spec's folder (paths are relative to it)", item.Value, msg)
			continue
		}
		w.Files = append(w.Files, item.Value)
		w.FileLines = append(w.FileLines, item.Line)
	}
	if w.Ref != "" && w.Repo == "" {
		d.errorf(f["ref"], "workspace.ref needs workspace.repo")
	}
	return w
}
