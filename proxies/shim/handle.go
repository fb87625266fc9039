package shim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// interpreters are launchers that run a script named by their first non-flag argument;
// any other launcher is a script's own name.
var interpreters = map[string]bool{"python3": true, "python": true, "node": true, "bash": true, "sh": true, "ruby": true, "perl": true, "deno": true, "bun": true}

// inline are flags after which an interpreter runs code given on the command line, not
// a script; valued are flags that take the next argument.
var (
	inline = map[string]bool{"-c": true, "-m": true, "-e": true, "--eval": true, "-p": true, "--print": true}
	valued = map[string]bool{"-W": true, "-X": true, "-r": true, "--require": true, "--import": true, "-Q": true, "-o": true, "-O": true}
)

// Handle answers one launcher's call (see the package comment).
func (s *Shim) Handle(ctx context.Context, req Request) Response {
	argv := append([]string{req.Launcher}, req.Args...)
	script, rest, why := s.scriptOf(req)
	var sc *spec.Script
	if why == "" {
		for i := range s.cfg.Scripts {
			c := &s.cfg.Scripts[i]
			if !contains(c.Launchers, req.Launcher) {
				continue
			}
			if ok, _ := path.Match(c.Path, script); ok || (!interpreters[req.Launcher] && path.Base(c.Path) == script) {
				sc = c
				break
			}
		}
		if sc == nil {
			why = fmt.Sprintf("%s is not one of the scripts the twin answers for", script)
		}
	}
	if sc == nil {
		return s.refuse(req.Launcher, argv, why)
	}
	if sc.Real {
		// Allowed by the spec: the relay runs the real program; recorded as refused-free.
		return Response{Run: true}
	}
	args, err := scriptArgs(*sc, rest)
	if err != nil {
		out := hub.Command{Exit: 2, Stderr: fmt.Sprintf("usage: %s: %v\n", script, err)}
		if rerr := s.hub.RefuseCommand(Transport, sc.Name, argv, "bad arguments: "+err.Error(), out); errors.Is(rerr, hub.ErrClosed) {
			return closed()
		}
		return Response{Exit: out.Exit, Stderr: out.Stderr}
	}
	twin, _ := s.hub.Source().(*Twin)
	var raw []byte
	renderer := func(r world.Reply) hub.Command { return render(*sc, args, r) }
	if twin.Serves(sc.Name) {
		// The adapter is told the command line; its answer is printed as it gave it.
		withArgv := map[string]any{scriptArgvArg: argv}
		for k, v := range args {
			withArgv[k] = v
		}
		raw, _ = json.Marshal(withArgv)
		renderer = func(r world.Reply) hub.Command { return renderAdapter(*sc, args, r, twin) }
	} else {
		raw, _ = json.Marshal(args)
	}
	_, out, err := s.hub.CallCommand(ctx, Transport, sc.Name, argv, raw, renderer)
	if err != nil {
		if errors.Is(err, hub.ErrClosed) {
			return closed()
		}
		return Response{Exit: 2, Stderr: "chaos shim: " + err.Error() + "\n"}
	}
	return Response{Exit: out.Exit, Stdout: out.Stdout, Stderr: out.Stderr}
}

func closed() Response {
	return Response{Exit: 1, Stderr: "chaos shim: the trial has ended; nothing was run\n"}
}

// refuse fails a launcher's call closed: nothing runs, exit 1, recorded.
func (s *Shim) refuse(launcher string, argv []string, why string) Response {
	out := hub.Command{Exit: 1, Stderr: fmt.Sprintf("chaos shim: %s is blocked in this trial: %s; nothing was run\n", launcher, why)}
	if err := s.hub.RefuseCommand(Transport, launcher, argv, why, out); errors.Is(err, hub.ErrClosed) {
		return closed()
	}
	return Response{Exit: out.Exit, Stderr: out.Stderr}
}

// scriptOf is the script a call runs, relative to the sandbox and `/` separated, and the
// arguments after it; why says why there is none.
func (s *Shim) scriptOf(req Request) (script string, rest []string, why string) {
	if !interpreters[req.Launcher] {
		return req.Launcher, req.Args, ""
	}
	for i := 0; i < len(req.Args); i++ {
		a := req.Args[i]
		switch {
		case inline[a]:
			return "", nil, fmt.Sprintf("%s runs code given on its command line (%s), not a script", req.Launcher, a)
		case valued[a]:
			i++
		case a == "-" || a == "--":
			return "", nil, fmt.Sprintf("%s reads its program from stdin", req.Launcher)
		case strings.HasPrefix(a, "-"):
		default:
			p := a
			if !filepath.IsAbs(p) {
				p = filepath.Join(req.Cwd, p)
			}
			rel, err := filepath.Rel(s.cfg.Sandbox, filepath.Clean(p))
			if err != nil || !filepath.IsLocal(rel) {
				return "", nil, fmt.Sprintf("%s is outside the project the agent works on", a)
			}
			return filepath.ToSlash(rel), req.Args[i+1:], ""
		}
	}
	return "", nil, fmt.Sprintf("%s was given no script", req.Launcher)
}

// scriptArgs are a call's arguments by name: positional ones named by the script's args,
// `--name value`, `--name=value`, a lone `--flag` as "true"; then the key and the value
// from the script's templates.
func scriptArgs(sc spec.Script, rest []string) (map[string]string, error) {
	args := map[string]string{}
	var positional []string
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if name, ok := strings.CutPrefix(a, "--"); ok && name != "" {
			if n, v, ok := strings.Cut(name, "="); ok {
				args[n] = v
			} else if i+1 < len(rest) && !strings.HasPrefix(rest[i+1], "--") {
				args[name] = rest[i+1]
				i++
			} else {
				args[name] = "true"
			}
			continue
		}
		positional = append(positional, a)
	}
	// Positional arguments fill the names no flag gave, in order.
	var missing []string
	for _, name := range sc.Args {
		if _, ok := args[name]; ok {
			continue
		}
		if len(positional) == 0 {
			missing = append(missing, name)
			continue
		}
		args[name], positional = positional[0], positional[1:]
	}
	if len(positional) > 0 {
		return nil, fmt.Errorf("unexpected argument %q", positional[0])
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("missing argument %s", strings.Join(missing, " "))
	}
	delete(args, spec.ScriptKeyArg)
	if sc.Effect != spec.EffectNone {
		key, err := fill(sc.Key, args)
		if err != nil {
			return nil, err
		}
		args[spec.ScriptKeyArg] = key
	}
	if sc.Effect == spec.EffectWrite {
		// An adapter's write stores what it replies; a value template is only told to it.
		v, err := fill(sc.Value, args)
		if err != nil {
			return nil, err
		}
		args[spec.ScriptValueArg] = v
	}
	return args, nil
}

// fill is spec.Fill that refuses a placeholder no argument fills.
func fill(template string, args map[string]string) (string, error) {
	for _, m := range spec.Placeholders(template) {
		if _, ok := args[m]; !ok {
			return "", fmt.Errorf("missing argument %s", m)
		}
	}
	return spec.Fill(template, args), nil
}

// render is the command's output for the twin's reply: a failure on stderr with exit 1
// (the script's session_expired text for a 401), a success on stdout from the script's
// stdout template, the read value in {value}. A reply that is not the JSON the world
// writes (a truncated reply) is printed as it came.
func render(sc spec.Script, args map[string]string, r world.Reply) hub.Command {
	vars := map[string]string{}
	for k, v := range args {
		vars[k] = v
	}
	if r.IsError {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal([]byte(r.Text), &e) != nil || e.Error == "" {
			e.Error = r.Text
		}
		vars["error"] = e.Error
		t := sc.Failure
		if r.Status == 401 {
			t = sc.SessionExpired
		}
		return hub.Command{Exit: 1, Stderr: line(spec.Fill(t, vars))}
	}
	if sc.Stdout == "" {
		return hub.Command{Stdout: line(r.Text)}
	}
	if sc.Effect == spec.EffectRead {
		var m map[string]any
		if json.Unmarshal([]byte(r.Text), &m) != nil {
			return hub.Command{Stdout: line(r.Text)}
		}
		vars[spec.ScriptValueArg] = text(m[spec.ScriptValueArg])
	}
	return hub.Command{Stdout: line(spec.Fill(sc.Stdout, vars))}
}

// scriptArgvArg is the argument of an adapter script's tool call that carries the
// command line (the adapter is told it; the row has it as argv too).
const scriptArgvArg = "argv"

// renderAdapter is render for a script its adapter answers: the adapter's exit code,
// stdout and stderr as it gave them (after the fault, which may have cut or emptied the
// stdout); chaos's own failures (a transient error, a session drop) by the script's
// failure and session_expired templates; a call the adapter could not answer refused
// (exit 1, a rejected row) and the trial left without a verdict.
func renderAdapter(sc spec.Script, args map[string]string, r world.Reply, twin *Twin) hub.Command {
	stderr := twin.takeStderr()
	if why := twin.Failure(); why != "" {
		return hub.Command{Exit: 1, Stderr: "chaos shim: " + why + "; nothing was run\n", Refused: AdapterFailedPrefix + why}
	}
	if r.IsError && r.Status == adapterStatus {
		var e struct {
			Error  string `json:"error"`
			Exit   int    `json:"exit"`
			Stdout string `json:"stdout"`
		}
		if json.Unmarshal([]byte(r.Text), &e) == nil && e.Exit != 0 {
			return hub.Command{Exit: e.Exit, Stdout: e.Stdout, Stderr: e.Error}
		}
	}
	if r.IsError {
		return render(sc, args, r)
	}
	return hub.Command{Stdout: r.Text, Stderr: stderr}
}

func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func line(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}
