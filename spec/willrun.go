package spec

import (
	"fmt"
	"slices"
	"strings"
)

// WillRun is what a run of s starts and where it sends its model's calls, one line
// each, as the spec writes it ({tokens} and ${VAR}s as written): the agent's command,
// the operator's resume command, each real server's command or address, each command
// check, the browser, where the model proxy forwards and where a reviewer is asked. A
// person who approves a plan approves these (chaos mcp shows them with every plan).
func (s *Spec) WillRun() []string {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	agent := s.Agent.Command
	if strings.TrimSpace(agent) == "" {
		agent = "(none in the spec: the command given after --)"
	}
	where := "on this machine, as you"
	if s.Agent.IsDocker() {
		where = "in a container: " + s.Agent.Container.Describe()
	}
	add("agent (every trial, %s): sh -c %s", where, ShellQuote(agent))
	if s.Operator != nil {
		add("operator.resume (after the agent ends, up to %d times): sh -c %s", s.Operator.Turns, ShellQuote(s.Operator.Resume))
	}
	for _, sv := range s.Servers {
		if sv.Stdio() {
			env := make([]string, 0, len(sv.Env))
			for k, v := range sv.Env {
				env = append(env, k+"="+v)
			}
			slices.Sort(env)
			words := append(env, ShellQuote(sv.Command))
			for _, a := range sv.Args {
				words = append(words, ShellQuote(a))
			}
			add("server %s (started with the run and every trial, on this machine): %s", sv.Name, strings.Join(words, " "))
		} else {
			add("server %s (reached with the run and every trial): %s", sv.Name, sv.URL)
		}
	}
	for _, t := range s.Tasks {
		for _, p := range t.Probes {
			if p.Kind != "command" {
				continue
			}
			what := "command check"
			if p.Overrules {
				what = "check (overrules the world verdict)"
			}
			add("%s (after every trial, in its sandbox, on this machine): sh -c %s", what, ShellQuote(p.Command))
		}
	}
	if b := s.Browser; b != nil {
		switch {
		case b.Connect != "":
			add("browser: the one already running at %s", b.Connect)
		case b.Chromium != "":
			add("browser (every trial): %s", b.Chromium)
		default:
			add("browser (every trial): chromium from PATH")
		}
	}
	if s.Model.Upstream != "" {
		add("model: the agent's model calls ({llm_url}) go through chaos's proxy to %s", s.Model.Upstream)
	} else {
		add("model: no model proxy (model.upstream is not set): the agent calls whatever model it calls itself")
	}
	if r := s.Model.Reviewer; r != nil {
		add("reviewer: %s model %s at %s", r.API, r.Model, r.BaseURL)
	}
	return out
}
