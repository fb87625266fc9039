package mcpserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crashwall/chaos/spec"
)

// planSkillTestDoc is plan_skill_test's description: what it does that is real.
const planSkillTestDoc = `Plan a test of a Claude Code skill (list_skills finds them): chaos runs the skill once, clean, with claude -p through a recording wall in front of its REAL MCP servers (what it does there is real: writes, deletes, messages), plans the fault conditions from the calls it saw, and returns the plan, its estimated cost (the clean run's cost x trials) and a confirmation token for start_run. The trials, once started, also use the real servers (with fresh copies of the with inputs in a sandbox). Refused unless allow_real_calls is true: pass it only when the user has agreed to the clean run's real calls. Nothing but the clean run happens before start_run.`

type skillTestIn struct {
	Skill          string   `json:"skill" jsonschema:"the skill's name (list_skills)"`
	Prompt         string   `json:"prompt" jsonschema:"what claude -p is asked to do; the skill should be what does it"`
	With           []string `json:"with,omitempty" jsonschema:"input files or folders (relative to the project) every trial gets a fresh copy of"`
	Repeat         int      `json:"repeat,omitempty" jsonschema:"trials per condition (default 1)"`
	Model          string   `json:"model,omitempty" jsonschema:"the model every trial uses, pinned (default chaos skill test's)"`
	Check          string   `json:"check,omitempty" jsonschema:"a command run in each trial's sandbox that prints {\"problems\": [...]}; it overrules the world verdict"`
	ModelUpstream  string   `json:"model_upstream,omitempty" jsonschema:"put chaos's model proxy in front of Claude Code, forwarding to this Anthropic API base URL (tokens and cost per trial)"`
	AllowRealCalls bool     `json:"allow_real_calls,omitempty" jsonschema:"true only when the user agreed that the clean run (now) and the trials (on start_run) make real calls to the skill's servers"`
}

// skillTestTimeout bounds the clean run: claude -p's own --timeout (10 minutes) and the
// wall's start around it.
const skillTestTimeout = 15 * time.Minute

func (s *Server) planSkillTest(ctx context.Context, _ *mcp.CallToolRequest, in skillTestIn) (*mcp.CallToolResult, PlanOut, error) {
	switch {
	case strings.TrimSpace(in.Skill) == "" || strings.TrimSpace(in.Prompt) == "":
		return nil, PlanOut{}, errors.New("skill and prompt are required (list_skills finds the skills)")
	case !in.AllowRealCalls:
		return nil, PlanOut{}, errors.New("refused: planning a skill test runs the skill once, clean, against its real MCP servers, and what it does there is real (writes, deletes, messages sent); the trials do too once started. Ask the user, and call again with allow_real_calls: true only if they agree. Nothing was run")
	case in.Repeat < 0:
		return nil, PlanOut{}, errors.New("repeat must be 1 or more")
	}
	args := []string{"skill", "test", in.Skill, "--prompt", in.Prompt, "--allow-real-calls", "--plan-only", "--project", s.opts.Dir}
	for _, w := range in.With {
		p := s.path(w)
		if rel, err := filepath.Rel(s.opts.Dir, p); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return nil, PlanOut{}, fmt.Errorf("refused: with %q is outside the project %s; a skill test's inputs come from the project", w, s.opts.Dir)
		}
		args = append(args, "--with", p)
	}
	if in.Repeat > 0 {
		args = append(args, "--repeat", strconv.Itoa(in.Repeat))
	}
	for flag, v := range map[string]string{"--model": in.Model, "--check": in.Check, "--model-upstream": in.ModelUpstream} {
		if v != "" {
			args = append(args, flag, v)
		}
	}
	if s.opts.DataDir != "" {
		args = append(args, "--data-dir", s.opts.DataDir)
	}
	cctx, cancel := context.WithTimeout(ctx, skillTestTimeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, s.opts.Chaos, args...)
	cmd.Dir = s.opts.Dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, PlanOut{}, fmt.Errorf("the skill test cannot be planned: %s", strings.TrimSpace(stderr.String()+"\n"+lastLines.FindString(stdout.String())+"\n"+err.Error()))
	}
	out := PlanOut{Plan: strings.TrimSpace(stdout.String())}
	var specPath, only string
	for _, line := range strings.Split(out.Plan, "\n") {
		switch {
		case strings.HasPrefix(line, "estimated cost: "):
			out.EstimatedCost = line
		case strings.HasPrefix(line, "spec: "):
			specPath = strings.TrimPrefix(line, "spec: ")
		case strings.HasPrefix(line, "only: "):
			only = strings.TrimPrefix(line, "only: ")
		}
	}
	if specPath == "" || only == "" {
		return nil, PlanOut{}, fmt.Errorf("chaos skill test --plan-only printed no spec or conditions (a bug):\n%s", out.Plan)
	}
	hash, err := fileHash(specPath)
	if err != nil {
		return nil, PlanOut{}, fmt.Errorf("read the skill test's spec: %w", err)
	}
	sp, err := spec.Load(specPath)
	if err != nil {
		return nil, PlanOut{}, fmt.Errorf("the skill test's spec does not load: %w", err)
	}
	out.Plan += willRun(sp)
	runArgs := []string{"--only", only}
	out.Confirmation = token()
	out.Command = "chaos run " + spec.ShellQuote(specPath) + " --only " + only
	s.mu.Lock()
	s.plans[out.Confirmation] = plan{Spec: specPath, SpecHash: hash, Args: runArgs, Name: "skill-" + in.Skill, RunsDir: filepath.Join(filepath.Dir(specPath), "runs")}
	s.mu.Unlock()
	return nil, out, nil
}
