// Package mcpserver is chaos as an MCP server (chaos mcp): an agent such as Claude Code can
// list the skills and specs on the machine, plan a run (the plan and its estimated cost,
// with a confirmation token), start it only with that token, and follow its status and
// results. Runs are `chaos run` processes of the chaos binary, each writing its run folder
// as any run does.
//
//	agent ──MCP stdio──> chaos mcp ── list_skills    skills.Discover
//	                               ── list_specs     *.yaml under a folder that load as specs
//	                               ── plan_run       chaos run SPEC --dry-run  ──> plan, cost, confirmation
//	                               ── plan_skill_test (allow_real_calls) chaos skill test --plan-only ──> plan, cost, confirmation
//	                               ── start_run      (confirmation) chaos run SPEC --out FOLDER, in the background
//	                               ── run_status     running / finished, exit code, the last lines it printed
//	                               ── run_results    summary.txt, verdict counts, cost
package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crashwall/chaos/report"
	"github.com/crashwall/chaos/skills"
	"github.com/crashwall/chaos/spec"
)

// Options configure the server. Empty fields take the defaults noted.
type Options struct {
	// Chaos is the chaos binary that plans and runs (required).
	Chaos string
	// Dir is the folder specs and runs are relative to (default the working directory).
	Dir string
	// Runs go where chaos run puts them from Dir (chaos-runs/<spec>/<run>), so that the
	// plan's estimate finds the spec's earlier runs; their logs go to <Dir>/chaos-runs/mcp.
	// DataDir is passed to chaos run as --data-dir ("" leaves chaos its default).
	DataDir string
	// Skills says where skills are looked for (Project defaults to Dir).
	Skills skills.Options
	// Version is the server's version in the MCP handshake.
	Version string
}

// Server is chaos's MCP server with the runs it started.
type Server struct {
	opts  Options
	mu    sync.Mutex
	plans map[string]plan // by confirmation token, each used once
	runs  map[string]*started
}

type plan struct {
	Spec, SpecHash, Name string
	Args                 []string
	// RunsDir is where the run folder goes ("": <Dir>/chaos-runs/<Name>); a skill test's
	// runs go in its folder's runs/, as chaos skill test puts them.
	RunsDir string
}

type started struct {
	ID, Out, Log string
	done         chan struct{}
	exit         int
	err          string
}

// finished says whether the run has ended; exit and err are set once it has.
func (r *started) finished() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// New returns the server; Run serves it.
func New(o Options) (*Server, error) {
	if o.Chaos == "" {
		return nil, errors.New("mcpserver: the chaos binary is required")
	}
	if o.Dir == "" {
		var err error
		if o.Dir, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	if o.Skills.Project == "" {
		o.Skills.Project = o.Dir
	}
	return &Server{opts: o, plans: map[string]plan{}, runs: map[string]*started{}}, nil
}

// MCP builds the MCP server with chaos's tools.
func (s *Server) MCP() *mcp.Server {
	v := s.opts.Version
	if v == "" {
		v = "dev"
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "chaos", Version: v}, &mcp.ServerOptions{
		Instructions: "chaos crash-tests AI agents: plan_run (a spec) and plan_skill_test (a Claude Code skill) show what a run would do and cost and return a confirmation; start_run needs that confirmation, which must come from the user's own approval of the plan. plan_skill_test runs the skill once against its real MCP servers: pass allow_real_calls only when the user agreed to that.",
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "list_skills", Description: "The Claude Code skills on this machine (user and project) and the MCP servers they can use; header and env values are shown as ${VAR} references only."}, s.listSkills)
	mcp.AddTool(srv, &mcp.Tool{Name: "list_specs", Description: "The chaos experiment specs (*.yaml) in a folder, with their tools and conditions."}, s.listSpecs)
	mcp.AddTool(srv, &mcp.Tool{Name: "plan_run", Description: "Plan a chaos run of a spec without starting anything: the trials, the estimated cost, and a confirmation token that start_run requires. Show the plan and cost to the user before starting."}, s.planRun)
	mcp.AddTool(srv, &mcp.Tool{Name: "plan_skill_test", Description: planSkillTestDoc}, s.planSkillTest) // skilltest.go
	mcp.AddTool(srv, &mcp.Tool{Name: "start_run", Description: "Start a planned run. Refused unless confirmation is the token plan_run returned for it (each token starts one run)."}, s.startRun)
	mcp.AddTool(srv, &mcp.Tool{Name: "run_status", Description: "Whether a started run is still running, its exit code when it ended, and the last lines it printed."}, s.runStatus)
	mcp.AddTool(srv, &mcp.Tool{Name: "run_results", Description: "The results of a finished run: its summary, verdict counts, silent-wrong headline and cost."}, s.runResults)
	return srv
}

// Run serves the MCP protocol on t until the client goes.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error { return s.MCP().Run(ctx, t) }

// --- tools ------------------------------------------------------------------------

type skillsIn struct {
	Project string `json:"project,omitempty" jsonschema:"the project folder (default: chaos mcp's folder)"`
}

func (s *Server) listSkills(_ context.Context, _ *mcp.CallToolRequest, in skillsIn) (*mcp.CallToolResult, skills.Found, error) {
	o := s.opts.Skills
	if in.Project != "" {
		o.Project = s.path(in.Project)
	}
	f, err := skills.Discover(o)
	return nil, f, err
}

type specsIn struct {
	Dir string `json:"dir,omitempty" jsonschema:"the folder to look in (default: chaos mcp's folder); its subfolders are searched two levels deep"`
}

// SpecInfo is a spec list_specs found.
type SpecInfo struct {
	Path       string   `json:"path"`
	Name       string   `json:"name"`
	Task       string   `json:"task,omitempty"`
	Tools      []string `json:"tools,omitempty"`
	Servers    []string `json:"servers,omitempty"`
	Replicates int      `json:"replicates"`
	Model      string   `json:"model_upstream,omitempty"`
}

type specsOut struct {
	Specs []SpecInfo `json:"specs"`
}

func (s *Server) listSpecs(_ context.Context, _ *mcp.CallToolRequest, in specsIn) (*mcp.CallToolResult, specsOut, error) {
	dir, err := s.inside(in.Dir)
	if err != nil {
		return nil, specsOut{}, err
	}
	out := specsOut{Specs: []SpecInfo{}}
	seen := map[string]bool{}
	for _, pattern := range []string{"*.yaml", "*/*.yaml", "*/*/*.yaml"} {
		paths, _ := filepath.Glob(filepath.Join(dir, pattern))
		for _, p := range paths {
			if strings.Contains(p, string(filepath.Separator)+"chaos-runs"+string(filepath.Separator)) {
				continue
			}
			real, err := s.inside(p)
			if err != nil || seen[real] {
				continue // a link out of --dir is not read; one back in is read once
			}
			seen[real] = true
			sp, err := spec.Load(p)
			if err != nil || sp.Agent.Command == "" && len(sp.Tools) == 0 && len(sp.Servers) == 0 {
				continue
			}
			info := SpecInfo{Path: p, Name: sp.Name, Replicates: sp.Replicates, Model: sp.Model.Upstream}
			if len(sp.Tasks) > 0 {
				info.Task = sp.Tasks[0].Prompt
			}
			for _, t := range sp.Tools {
				info.Tools = append(info.Tools, t.Name)
			}
			for _, sv := range sp.Servers {
				info.Servers = append(info.Servers, sv.Name)
			}
			out.Specs = append(out.Specs, info)
		}
	}
	sort.Slice(out.Specs, func(i, j int) bool { return out.Specs[i].Path < out.Specs[j].Path })
	return nil, out, nil
}

type planIn struct {
	Spec      string   `json:"spec" jsonschema:"the spec file"`
	Only      []string `json:"only,omitempty" jsonschema:"run only these conditions"`
	Reps      int      `json:"reps,omitempty" jsonschema:"replicates per condition (default: the spec's)"`
	BudgetUSD float64  `json:"budget_usd,omitempty" jsonschema:"stop starting trials once the run could spend more than this, in USD"`
}

// PlanOut is what plan_run returns.
type PlanOut struct {
	Plan string `json:"plan"`
	// EstimatedCost is the plan's cost line (from an earlier run of the spec), or why it
	// is unknown.
	EstimatedCost string `json:"estimated_cost"`
	// Confirmation is the token start_run needs to start this plan.
	Confirmation string `json:"confirmation"`
	Command      string `json:"command"`
}

func (s *Server) planRun(ctx context.Context, _ *mcp.CallToolRequest, in planIn) (*mcp.CallToolResult, PlanOut, error) {
	if strings.TrimSpace(in.Spec) == "" {
		return nil, PlanOut{}, errors.New("spec is required: a spec file (list_specs finds them)")
	}
	if in.Reps < 0 || in.BudgetUSD < 0 {
		return nil, PlanOut{}, errors.New("reps and budget_usd must be 0 or more")
	}
	path, err := s.inside(in.Spec)
	if err != nil {
		return nil, PlanOut{}, err
	}
	hash, err := fileHash(path)
	if err != nil {
		return nil, PlanOut{}, fmt.Errorf("read the spec: %w", err)
	}
	sp, err := spec.Load(path)
	if err != nil {
		return nil, PlanOut{}, fmt.Errorf("the spec cannot be planned: %w", err)
	}
	var args []string
	if len(in.Only) > 0 {
		args = append(args, "--only", strings.Join(in.Only, ","))
	}
	if in.Reps > 0 {
		args = append(args, "--reps", strconv.Itoa(in.Reps))
	}
	if in.BudgetUSD > 0 {
		args = append(args, "--budget", strconv.FormatFloat(in.BudgetUSD, 'f', -1, 64))
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	// --no-discover: planning starts none of the spec's servers; only start_run does.
	cmd := exec.CommandContext(cctx, s.opts.Chaos, append([]string{"run", path, "--dry-run", "--no-discover"}, args...)...)
	cmd.Dir = s.opts.Dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, PlanOut{}, fmt.Errorf("the spec cannot be planned: %s", strings.TrimSpace(stderr.String()+" "+err.Error()))
	}
	out := PlanOut{Plan: strings.TrimSpace(stdout.String()) + willRun(sp), EstimatedCost: "estimated cost: unknown (the spec has no model.upstream, so chaos sees no model calls to price)"}
	for _, line := range strings.Split(out.Plan, "\n") {
		if strings.HasPrefix(line, "estimated cost: ") {
			out.EstimatedCost = line
		}
	}
	out.Confirmation = token()
	out.Command = "chaos run " + spec.ShellQuote(path) + " " + strings.Join(args, " ")
	s.mu.Lock()
	name := spec.PathSafe(sp.Name)
	s.plans[out.Confirmation] = plan{Spec: path, SpecHash: hash, Args: args, Name: name}
	s.mu.Unlock()
	return nil, out, nil
}

type startIn struct {
	Confirmation string `json:"confirmation,omitempty" jsonschema:"the token plan_run returned, given only once the user approved the plan"`
}

// StartOut is what start_run returns.
type StartOut struct {
	Run string `json:"run"`
	// Folder is the run folder, written as the run goes.
	Folder string `json:"folder"`
}

func (s *Server) startRun(_ context.Context, _ *mcp.CallToolRequest, in startIn) (*mcp.CallToolResult, StartOut, error) {
	s.mu.Lock()
	p, ok := s.plans[in.Confirmation]
	if ok {
		delete(s.plans, in.Confirmation)
	}
	s.mu.Unlock()
	if !ok {
		return nil, StartOut{}, errors.New("refused: start_run needs the confirmation plan_run returned for this run (call plan_run, show the plan and its cost to the user, and start it with their approval); a confirmation starts one run")
	}
	if hash, err := fileHash(p.Spec); err != nil || hash != p.SpecHash {
		return nil, StartOut{}, fmt.Errorf("refused: %s changed since it was planned; plan it again", p.Spec)
	}
	id := time.Now().UTC().Format("20060102-150405") + "-" + token()[:6]
	out := filepath.Join(s.opts.Dir, "chaos-runs", p.Name, id)
	if p.RunsDir != "" {
		out = filepath.Join(p.RunsDir, id)
	}
	logs := filepath.Join(s.opts.Dir, "chaos-runs", "mcp")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return nil, StartOut{}, err
	}
	logPath := filepath.Join(logs, id+".log")
	log, err := os.Create(logPath)
	if err != nil {
		return nil, StartOut{}, err
	}
	args := append([]string{"run", p.Spec, "--out", out}, p.Args...)
	if s.opts.DataDir != "" {
		args = append(args, "--data-dir", s.opts.DataDir)
	}
	cmd := exec.Command(s.opts.Chaos, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = s.opts.Dir, log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, StartOut{}, fmt.Errorf("start chaos run: %w", err)
	}
	r := &started{ID: id, Out: out, Log: logPath, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		log.Close()
		r.exit = cmd.ProcessState.ExitCode()
		if err != nil && r.exit < 0 {
			r.err = err.Error()
		}
		close(r.done)
	}()
	s.mu.Lock()
	s.runs[id] = r
	s.mu.Unlock()
	return nil, StartOut{Run: id, Folder: out}, nil
}

type runIn struct {
	Run string `json:"run" jsonschema:"the run start_run returned, or a run folder"`
}

// StatusOut is what run_status returns.
type StatusOut struct {
	Run   string `json:"run"`
	State string `json:"state"` // running, finished
	// ExitCode is chaos run's exit code once finished (docs/cli.md: 0 ok, 1 bad input,
	// 3 unexpected, 4 no trial scored).
	ExitCode *int   `json:"exit_code,omitempty"`
	Error    string `json:"error,omitempty"`
	Folder   string `json:"folder"`
	Output   string `json:"output"`
}

var lastLines = regexp.MustCompile(`(?:[^\n]*\n?){1,15}$`)

func (s *Server) runStatus(_ context.Context, _ *mcp.CallToolRequest, in runIn) (*mcp.CallToolResult, StatusOut, error) {
	r, folder, err := s.find(in.Run)
	if err != nil {
		return nil, StatusOut{}, err
	}
	st := StatusOut{Run: in.Run, Folder: folder, State: "finished"}
	if r == nil {
		return nil, st, nil // a folder with its verdicts: a finished run
	}
	if r.finished() {
		code := r.exit
		st.ExitCode, st.Error = &code, r.err
	} else {
		st.State = "running"
	}
	if b, err := os.ReadFile(r.Log); err == nil {
		st.Output = lastLines.FindString(string(b))
	}
	return nil, st, nil
}

// ResultsOut is what run_results returns.
type ResultsOut struct {
	Folder    string         `json:"folder"`
	Trials    int            `json:"trials"`
	ByVerdict map[string]int `json:"by_verdict"`
	Summary   string         `json:"summary"`
	Cost      string         `json:"cost,omitempty"`
	Report    string         `json:"report"`
}

func (s *Server) runResults(_ context.Context, _ *mcp.CallToolRequest, in runIn) (*mcp.CallToolResult, ResultsOut, error) {
	r, folder, err := s.find(in.Run)
	if err != nil {
		return nil, ResultsOut{}, err
	}
	if r != nil && !r.finished() {
		return nil, ResultsOut{}, fmt.Errorf("run %s is still running (run_status follows it)", in.Run)
	}
	run, err := report.LoadRun(folder)
	if err != nil {
		return nil, ResultsOut{}, fmt.Errorf("run %s left no results: %w", in.Run, err)
	}
	out := ResultsOut{Folder: folder, Trials: len(run.Results), ByVerdict: map[string]int{}, Report: filepath.Join(folder, "report.html")}
	for _, t := range run.Results {
		v := t.Verdict
		if v == "" {
			v = t.Outcome
		}
		out.ByVerdict[v]++
	}
	if b, err := os.ReadFile(filepath.Join(folder, "summary.txt")); err == nil {
		out.Summary = string(b)
	}
	if cells, total := report.Costs(run.Results); cells != nil {
		out.Cost = total.CostLine()
	}
	return nil, out, nil
}

// find is a run this server started, else a run folder (r nil).
func (s *Server) find(id string) (r *started, folder string, err error) {
	s.mu.Lock()
	r = s.runs[id]
	s.mu.Unlock()
	if r != nil {
		return r, r.Out, nil
	}
	if id == "" {
		return nil, "", errors.New("run is required: what start_run returned, or a run folder")
	}
	folder = s.path(id)
	if _, err := os.Stat(filepath.Join(folder, "verdicts.json")); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, "", fmt.Errorf("no run %s: not started by this server, and not a finished run folder", id)
		}
		return nil, "", err
	}
	return nil, folder, nil
}

// willRun is the plan's last part: every command the run will start and where its
// model's calls go (spec.WillRun), so that what the person approves is what runs.
func willRun(sp *spec.Spec) string {
	var b strings.Builder
	b.WriteString("\n\nOnce started, the run runs these, and nothing else (commands as the spec writes them):")
	for _, line := range sp.WillRun() {
		b.WriteString("\n  - " + line)
	}
	return b.String()
}

// inside is p (relative to --dir) as the file system finds it, every link followed, when
// it is under --dir (also found so); else why it is refused. chaos mcp's caller is an
// agent: it reads no spec the person did not put under --dir.
func (s *Server) inside(p string) (string, error) {
	root, err := filepath.EvalSymlinks(s.opts.Dir)
	if err != nil {
		return "", fmt.Errorf("chaos mcp's folder %s: %w", s.opts.Dir, err)
	}
	real, err := filepath.EvalSymlinks(s.path(p))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", p, err)
	}
	if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		where := ""
		if real != s.path(p) {
			where = " (it leads to " + real + ")"
		}
		return "", fmt.Errorf("refused: %s is outside chaos mcp's folder %s%s; chaos mcp reads only what is under its --dir", p, s.opts.Dir, where)
	}
	return real, nil
}

func (s *Server) path(p string) string {
	if p == "" {
		return s.opts.Dir
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(s.opts.Dir, p)
}

func fileHash(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

func token() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
