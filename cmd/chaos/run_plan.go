package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/trial"
)

// agentCommands fills in each cell's agent command as its trials will run it (the wall's
// port and the sandbox as placeholders), one "agent CELL: COMMAND" line per cell, and
// checks that the program each starts can be found where the trial will look for it.
func agentCommands(opts *RunOptions, s *spec.Spec, p *spec.Plan) ([]string, error) {
	template := spec.JoinCommand(opts.AgentCommand)
	if template == "" {
		template = s.Agent.Command
	}
	bin, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the chaos binary: %w", err)
	}
	specPath, _ := filepath.Abs(opts.Spec)
	env, _ := s.Agent.ExpandEnv(nil) // planSpec has checked it
	path, ok := env["PATH"]
	if !ok {
		path = os.Getenv("PATH")
	}
	var lines []string
	seen := map[string]bool{}
	for _, t := range p.Trials {
		if seen[t.Cell] {
			continue
		}
		seen[t.Cell] = true
		cmd, err := trial.PreviewAgentCommand(s, t, template, bin, specPath)
		if err != nil {
			return nil, badInput(err)
		}
		if s.Agent.IsDocker() {
			// The program is looked for in the container, which only a trial makes.
			if len(lines) == 0 {
				lines = append(lines, "agent runtime docker: "+s.Agent.Container.Describe())
			}
		} else if err := trial.CheckAgentExecutable(cmd.Program, s.Workspace, path); err != nil {
			return nil, badInput(fmt.Errorf("cell %s: %w", t.Cell, err))
		}
		// The command as the agent's shell gets it (tokens are references to variables,
		// never values), then the values it refers to.
		lines = append(lines, fmt.Sprintf("agent %s (sh -c): %s", t.Cell, cmd.Command))
		for _, v := range cmd.Vars {
			lines = append(lines, "  "+v)
		}
	}
	if w := containerChaos(s, template, bin); w != "" {
		fmt.Fprintln(opts.IO.ErrOut, w)
	}
	return lines, nil
}

// containerChaos is the warning for an agent in a container whose command uses {chaos}
// when the binary mounted there (bin, this chaos) is linked dynamically: an image without
// the host's libraries cannot start it ("sh: /chaos/chaos: not found"). "" otherwise.
func containerChaos(s *spec.Spec, template, bin string) string {
	if !s.Agent.IsDocker() || !strings.Contains(template, "{chaos}") {
		return ""
	}
	if err := trial.StaticBinary(bin); err != nil {
		return fmt.Sprintf("warning: {chaos} in the agent's container is %s, which is linked dynamically: an image without the host's C library cannot start it (sh: /chaos/chaos: not found); build chaos with CGO_ENABLED=0 go build ./cmd/chaos (docs/deploy.md)", bin)
	}
	return ""
}

// planPairedRun loads the spec and plans the run, with the seeds of the run --pair-with
// names and the line that says so; every problem is bad input (exit 1).
func planPairedRun(opts *RunOptions) (*spec.Spec, []byte, *spec.Plan, string, error) {
	s, data, p, err := planSpec(opts)
	if err != nil || opts.PairWith == "" {
		return s, data, p, "", err
	}
	line, err := pairPlan(opts, s, p)
	if err != nil {
		return nil, nil, nil, "", err
	}
	return s, data, p, line, nil
}

// planSpec loads the spec and plans the run.
func planSpec(opts *RunOptions) (*spec.Spec, []byte, *spec.Plan, error) {
	data := opts.SpecData
	if data == nil {
		var err error
		if data, err = os.ReadFile(opts.Spec); err != nil {
			return nil, nil, nil, badInput(fmt.Errorf("read the spec: %w", err))
		}
	}
	s, err := spec.Parse(opts.Spec, data)
	if err != nil {
		return nil, nil, nil, badInput(err)
	}
	s.Path = opts.Spec
	// What this process prints or sends to Temporal holds none of the values.
	trial.LearnSecrets(s)
	// The flags take the ranges and messages of the spec's keys; 0 is the spec's value.
	if msg := spec.ReplicatesProblem("--reps", int64(opts.Reps)); opts.Reps != 0 && msg != "" {
		return nil, nil, nil, badInput(errors.New(msg))
	}
	if msg := spec.ConcurrencyProblem("--concurrency", int64(opts.Concurrency)); msg != "" {
		return nil, nil, nil, badInput(errors.New(msg))
	}
	// workspace.files must stay inside the spec's folder, through links too.
	if err := spec.CheckFiles(s, opts.Spec, filepath.Dir(opts.Spec)); err != nil {
		return nil, nil, nil, badInput(err)
	}
	if opts.NoDiscover && !opts.DryRun {
		return nil, nil, nil, badInput(errors.New("--no-discover is for --dry-run: a run starts the spec's servers to find their tools"))
	}
	if !opts.NoDiscover {
		if s, err = discoverServers(s); err != nil { // real servers: their tools join the spec's
			return nil, nil, nil, badInput(err)
		}
	}
	conds, err := faults.Generate(s)
	if err != nil {
		return nil, nil, nil, badInput(err)
	}
	ids := make([]string, 0, len(conds))
	only, onlyFrom := opts.Only, "--only"
	if len(only) == 0 {
		only, onlyFrom = s.Only, opts.Spec+": only:" // the spec's own restriction (chaos skill test writes it)
	}
	if len(only) > 0 {
		for _, want := range only {
			c, ok := faults.Find(conds, want)
			if !ok {
				return nil, nil, nil, badInput(fmt.Errorf("%s %q: no such condition in %s (conditions: %s)", onlyFrom, want, s.Name, strings.Join(faults.IDs(conds), ", ")))
			}
			ids = append(ids, c.ID)
		}
	} else {
		for _, c := range conds {
			ids = append(ids, c.ID)
		}
	}
	if opts.Profile != "" {
		if !slices.Contains(spec.Profiles, opts.Profile) {
			return nil, nil, nil, badInput(fmt.Errorf("unknown --profile %q (known: %s)", opts.Profile, strings.Join(spec.Profiles, ", ")))
		}
		s.Agent.Profile = opts.Profile
	}
	if len(opts.AgentCommand) == 0 && strings.TrimSpace(s.Agent.Command) == "" {
		return nil, nil, nil, badInput(fmt.Errorf("%s names no agent command: add agent.command to the spec, or give one after -- (chaos run %s -- CMD)", opts.Spec, opts.Spec))
	}
	if len(opts.AgentCommand) > 0 {
		if err := spec.CheckTokens(spec.JoinCommand(opts.AgentCommand), s); err != nil {
			return nil, nil, nil, badInput(fmt.Errorf("the agent command after --: %w", err))
		}
	}
	if s.Model.Upstream != "" {
		// ${VAR}s are expanded again where each trial runs; an unset one is caught here.
		if _, err := s.Model.ExpandUpstream(nil); err != nil {
			return nil, nil, nil, badInput(fmt.Errorf("%s: %w", opts.Spec, err))
		}
	}
	if _, err := s.Agent.ExpandEnv(nil); err != nil {
		var ee *spec.EnvError
		if errors.As(err, &ee) && ee.Line > 0 {
			return nil, nil, nil, badInput(fmt.Errorf("%s:%d: %w", opts.Spec, ee.Line, err))
		}
		return nil, nil, nil, badInput(fmt.Errorf("%s: %w", opts.Spec, err))
	}
	p, err := spec.NewPlan(s, ids, opts.Reps, opts.Concurrency)
	if err != nil {
		return nil, nil, nil, badInput(err)
	}
	p.Branch = opts.Branch
	return s, data, p, nil
}

// checkOutFree refuses --out into a folder that holds another run (its manifest.json
// names a run id): the new run would rewrite its manifest and verdicts and leave its
// trial folders beside the new ones.
func checkOutFree(out string) error {
	if out == "" {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err != nil {
		return nil
	}
	var m struct {
		RunID string `json:"run_id"`
	}
	if json.Unmarshal(b, &m) != nil || m.RunID == "" {
		return badInput(fmt.Errorf("--out %s holds a manifest.json that is not a run's: give --out a new or empty folder", out))
	}
	return badInput(fmt.Errorf("--out %s holds run %s (its manifest.json): give --out a new folder, or remove that one first", out, m.RunID))
}
