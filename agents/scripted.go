package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/crashwall/chaos/spec"
)

// Styles of the reference agents.
const (
	// Blind performs the task and says "Done" whatever happened.
	Blind = "blind"
	// Verifying reads every write back, rewrites what did not stick, and reports what it
	// could not confirm.
	Verifying = "verifying"
	// Retrying retries a call that failed, up to three times, and never reads back.
	Retrying = "retrying"
	// Honest reports any error or unreadable reply it saw, and never retries.
	Honest = "honest"
)

// Styles lists the styles.
var Styles = []string{Blind, Verifying, Retrying, Honest}

// Step is one call of a script.
type Step struct {
	Tool string
	Args map[string]any
	// Key and Want are what a write stores, for reading it back.
	Key  string
	Want any
	// Path, on a read-back of a declared script, is the JSON path of the value it shows.
	Path string
}

// Script is the task of a spec as a reference agent performs it: read every source,
// write every value the state checks expect, and (for Verifying) read it back.
type Script struct {
	Sources []Step
	Writes  []Step
	// Reads holds, per write, the read-back step ("" Tool when no tool reads it).
	Reads []Step
	// ValueField is the field a read-back answers with, per read.
	ValueFields []string
}

// ScriptFor derives the script from a spec's tools and state checks.
func ScriptFor(s *spec.Spec) (*Script, error) { return ScriptForTask(s, "") }

// ScriptForTask derives the script of the task whose prompt is prompt (the trial's
// {task}, which the agent's environment carries as CHAOS_TASK): only that task's state
// checks, so that in a spec with several tasks (an Ajantik file) the agent does the one
// it was given, not every task's writes in turn. A prompt that names no task, or "",
// takes every task's checks.
func ScriptForTask(s *spec.Spec, prompt string) (*Script, error) {
	checks := s.AllStateChecks()
	for _, t := range s.Tasks {
		if prompt != "" && t.Prompt == prompt {
			checks = t.StateChecks
			break
		}
	}
	sc := &Script{}
	for _, t := range s.Tools {
		if t.Effect == spec.EffectNone {
			sc.Sources = append(sc.Sources, Step{Tool: t.Name, Args: map[string]any{}})
		}
	}
	for _, c := range checks {
		if c.Op != "equals" {
			continue
		}
		w, ok := toolFor(s, spec.EffectWrite, c.Key)
		if !ok {
			return nil, fmt.Errorf("no tool writes %q, so a reference agent cannot perform this task", c.Key)
		}
		args := map[string]any{w.ValueFieldName(): c.Equals}
		if w.Key == "" {
			args[w.KeyFieldName()] = c.Key
		}
		sc.Writes = append(sc.Writes, Step{Tool: w.Name, Args: args, Key: c.Key, Want: c.Equals})
		read := Step{Key: c.Key, Want: c.Equals}
		vf := ""
		if r, ok := toolFor(s, spec.EffectRead, c.Key); ok {
			read.Tool, read.Args = r.Name, map[string]any{}
			if r.Key == "" {
				read.Args[r.KeyFieldName()] = c.Key
			}
			vf = r.ValueFieldName()
		}
		sc.Reads = append(sc.Reads, read)
		sc.ValueFields = append(sc.ValueFields, vf)
	}
	if len(sc.Writes) == 0 {
		return nil, fmt.Errorf("the spec has no state check with equals, so a reference agent has nothing to write")
	}
	return sc, nil
}

func toolFor(s *spec.Spec, effect spec.Effect, key string) (spec.Tool, bool) {
	for _, t := range s.Tools {
		if t.Effect == effect && t.Key == key {
			return t, true
		}
	}
	for _, t := range s.Tools {
		if t.Effect == effect && t.Key == "" {
			return t, true
		}
	}
	return spec.Tool{}, false
}

// Run performs the script in the given style over c and writes the closing message to
// out, progress to log. The closing message ends with a status line (STATUS: ok|failed).
func Run(ctx context.Context, style string, sc *Script, c Client, out, log io.Writer) error {
	a := &agent{style: style, c: c, log: log}
	switch style {
	case Blind, Verifying, Retrying, Honest:
	default:
		return fmt.Errorf("unknown style %q (use %s)", style, strings.Join(Styles, ", "))
	}
	sourcesOK := true
	for _, st := range sc.Sources {
		if _, ok := a.do(ctx, st, true); !ok {
			sourcesOK = false
		}
	}
	for _, st := range sc.Writes {
		a.do(ctx, st, false)
	}
	var unconfirmed []string
	if style == Verifying {
		for i, w := range sc.Writes {
			if !a.confirm(ctx, w, sc.Reads[i], sc.ValueFields[i]) {
				unconfirmed = append(unconfirmed, w.Key)
			}
		}
	}
	if !sourcesOK && style == Verifying {
		// It could not read what the task is based on: whatever it wrote is a guess.
		unconfirmed = append(unconfirmed, "the source data")
	}
	fmt.Fprintln(out, a.closing(sc, unconfirmed))
	return nil
}

type agent struct {
	style    string
	c        Client
	log      io.Writer
	problems []string
}

// do makes one call, with the style's retries, and notes what went wrong.
func (a *agent) do(ctx context.Context, st Step, source bool) (string, bool) {
	tries := 1
	if a.style == Retrying || a.style == Verifying {
		tries = 4
	}
	var last string
	for i := 0; i < tries; i++ {
		text, isErr, err := a.c.Call(ctx, st.Tool, st.Args)
		fmt.Fprintf(a.log, "call %s %v -> error=%v %s\n", st.Tool, st.Args, isErr || err != nil, oneLine(text, err))
		switch {
		case err != nil:
			last = fmt.Sprintf("%s could not be called: %v", st.Tool, err)
		case isErr:
			last = fmt.Sprintf("%s failed: %s", st.Tool, oneLine(text, nil))
		case source && !json.Valid([]byte(text)):
			last = fmt.Sprintf("%s answered something that is not valid JSON", st.Tool)
		case source && a.style == Verifying && emptyJSON(text):
			last = fmt.Sprintf("%s answered with every field empty", st.Tool)
		default:
			return text, true
		}
	}
	a.problems = append(a.problems, last)
	return "", false
}

// confirm reads a write back, rewriting it up to twice when it did not stick. A read that
// fails may mean the write never happened (a file that is not there): the write is tried
// again; when that fails through all its tries too, the confirming ends, since nothing
// can be confirmed and more calls would only be spent (a dropped session fails every
// call that follows).
func (a *agent) confirm(ctx context.Context, w, r Step, valueField string) bool {
	if r.Tool == "" {
		return false
	}
	for i := 0; i < 3; i++ {
		text, ok := a.do(ctx, r, false)
		if !ok {
			if i == 2 {
				return false
			}
			if _, wrote := a.do(ctx, w, false); !wrote {
				return false
			}
			continue
		}
		if r.Path != "" {
			if readBack(text, r) {
				return true
			}
		} else {
			var got map[string]any
			if json.Unmarshal([]byte(text), &got) == nil && equal(got[valueField], w.Want) {
				return true
			}
		}
		if i < 2 {
			a.do(ctx, w, false)
		}
	}
	return false
}

func (a *agent) closing(sc *Script, unconfirmed []string) string {
	var did []string
	for _, w := range sc.Writes {
		did = append(did, fmt.Sprintf("%s to %v", w.Key, w.Want))
	}
	done := "Done. I set " + strings.Join(did, " and ") + "."
	switch a.style {
	case Blind:
		return done + "\nSTATUS: ok"
	case Verifying:
		if len(unconfirmed) > 0 {
			// The tools may have reported no error at all (a dropped write answers
			// "updated"): then the reading back is the only problem there is to name.
			seen := "the tools reported no error, but reading back did not show the values written"
			if len(a.problems) > 0 {
				seen = "problems seen: " + strings.Join(dedupe(a.problems), "; ")
			}
			return fmt.Sprintf("I could not confirm that the task was completed: %s could not be confirmed; %s.\nSTATUS: failed",
				strings.Join(unconfirmed, " and "), seen)
		}
		return "Done, and verified: I set " + strings.Join(did, " and ") + " and read each value back.\nSTATUS: ok"
	case Retrying:
		if len(a.problems) > 0 {
			return fmt.Sprintf("I could not complete the task: %s.\nSTATUS: failed", strings.Join(dedupe(a.problems), "; "))
		}
		return done + "\nSTATUS: ok"
	default: // Honest
		if len(a.problems) > 0 {
			return fmt.Sprintf("I ran into problems, so the task may not be complete: %s.\nSTATUS: failed", strings.Join(dedupe(a.problems), "; "))
		}
		return done + "\nSTATUS: ok"
	}
}

func equal(got, want any) bool {
	if reflect.DeepEqual(got, want) {
		return true
	}
	return fmt.Sprint(got) == fmt.Sprint(want)
}

func emptyJSON(text string) bool {
	var v any
	if json.Unmarshal([]byte(text), &v) != nil {
		return false
	}
	var nonEmpty func(any) bool
	nonEmpty = func(v any) bool {
		switch x := v.(type) {
		case map[string]any:
			for _, e := range x {
				if nonEmpty(e) {
					return true
				}
			}
			return false
		case []any:
			return len(x) > 0
		case string:
			return x != ""
		case float64:
			return x != 0
		case bool:
			return x
		}
		return false
	}
	return !nonEmpty(v)
}

func oneLine(text string, err error) string {
	if err != nil {
		return err.Error()
	}
	text = strings.ReplaceAll(text, "\n", " ")
	if len(text) > 200 {
		text = text[:200] + "..."
	}
	return text
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
