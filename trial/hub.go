package trial

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/proxies/httpwall"
	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/proxies/llm"
	"github.com/crashwall/chaos/proxies/stdio"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/run"
)

// StartHub starts the trial's hub (world, armed condition, record) and serves it on a
// loopback port, then fills in the agent command's tokens. It takes the trial and the
// workspace from PrepareWorkspace; in.Hub is ignored. The hub stays in this process, under
// the trial's key, until Teardown.
func (h *Host) StartHub(ctx context.Context, in run.AgentInput) (run.HubInfo, error) {
	t := in.Trial
	s, err := ParseSpec(t.Spec)
	if err != nil {
		return run.HubInfo{}, err
	}
	task, err := trialTask(s, t.Trial.Task)
	if err != nil {
		return run.HubInfo{}, badInput(err)
	}
	template := agentTemplate(t, s)
	if strings.TrimSpace(template) == "" {
		return run.HubInfo{}, badInput(errors.New("the spec names no agent command; give one after -- (chaos run SPEC -- CMD)"))
	}
	// Real servers behind the wall are reached now; their tools join the spec's.
	up, err := openUpstream(ctx, s, in.Workspace.Dir)
	if err != nil {
		return run.HubInfo{}, err
	}
	started := false
	defer func() {
		if !started && up != nil {
			up.Close()
		}
	}()
	if up != nil {
		s = up.Spec()
	}
	conds, err := faults.Generate(s)
	if err != nil {
		return run.HubInfo{}, badInput(err)
	}
	cond, ok := faults.Find(conds, t.Trial.Condition)
	if !ok {
		return run.HubInfo{}, badInput(fmt.Errorf("unknown condition %q for %s (known: %s)",
			t.Trial.Condition, s.Name, strings.Join(faults.IDs(conds), ", ")))
	}
	if in.Workspace.TrialDir == "" {
		return run.HubInfo{}, badInput(errors.New("StartHub needs the workspace that PrepareWorkspace returned (its trial folder is empty)"))
	}
	bin, err := h.chaosBin()
	if err != nil {
		return run.HubInfo{}, err
	}

	// A hub left by an earlier attempt must be closed before the record is reopened: its
	// writer appends to the same file and would write its session end into the new record.
	if old := h.drop(t.Key()); old != nil {
		old.stop("replaced: the hub was started again by a retried attempt")
	}
	// The model upstream's ${VAR}s are this worker's environment.
	var upstream string
	if s.Model.Upstream != "" {
		if upstream, err = s.Model.ExpandUpstream(nil); err != nil {
			return run.HubInfo{}, badInput(err)
		}
	}
	recPath := filepath.Join(in.Workspace.TrialDir, "record.jsonl")
	rec, err := record.Open(recPath)
	if err != nil {
		return run.HubInfo{}, fmt.Errorf("open the trial's record: %w", err)
	}
	// The model proxy writes its rows into the trial's record, beside the hub's.
	var model *llm.ModelProxy
	var extra map[string]http.Handler
	if upstream != "" {
		model, err = llm.NewModelProxy(llm.ModelProxyConfig{
			Upstream: upstream, Fault: s.Model.FaultName(), Rate: s.Model.Rate, Steps: s.Model.Steps,
			Seed: t.Trial.Seed, Record: rec, Prices: s.Model.PriceTable(), MaxUSD: s.Limits.MaxCostUSD,
			Context: faults.ModelContext{StaleValues: s.Model.StaleValues, Entities: s.Model.Entities},
		})
		if err != nil {
			rec.Close(record.Row{Reason: "the model proxy could not start: " + err.Error()})
			return run.HubInfo{}, badInput(err)
		}
		extra = map[string]http.Handler{httpwall.ModelPrefix + "/": http.StripPrefix(httpwall.ModelPrefix, model)}
	}
	// Scripts answered by adapters: their processes, behind the hub (shim.go).
	src, err := openTwin(s, up, cond, t)
	if err != nil {
		rec.Close(record.Row{Reason: "the scripts' adapters could not start: " + err.Error()})
		return run.HubInfo{}, badInput(err)
	}
	var prior []hub.Prior
	if t.BranchFrom != "" {
		// chaos run --branch: a fault trial starts from its clean trial's twin (branchrun.go).
		b := openBranch(s, task, cond, t, in.Workspace.TrialDir, src == nil)
		if b.None == "" {
			src = branchedWorld(s, b.Branch)
			task.Prompt = branchedPrompt(task.Prompt, b.Branch)
			prior = b.Branch.Prior
		}
		h.logger().Info("branch", "trial", t.Trial.ID, "branch", b.summary())
	}
	hub, err := hub.NewHub(hub.Config{Spec: s, Condition: cond, Seed: t.Trial.Seed, Trial: t.Trial.ID, Record: rec, Source: src, Prior: prior})
	if err != nil {
		if c, ok := src.(io.Closer); ok && up == nil {
			c.Close() // the adapters' processes
		}
		rec.Close(record.Row{Reason: "the hub could not start: " + err.Error()})
		return run.HubInfo{}, badInput(fmt.Errorf("start the hub: %w", err))
	}
	started = true // the hub closes the servers now
	// Subscribe before the hub serves anyone, so the watcher sees every row from the first.
	rows, unsubscribe := hub.Subscribe()
	srv, err := httpwall.ServeWith(hub, httpwall.ServeConfig{Addr: "127.0.0.1:0", Extra: extra})
	if err != nil {
		hub.Close("the wall could not listen: " + err.Error())
		return run.HubInfo{}, err
	}
	lt := &Live{spec: s, ref: t.Spec, hub: hub, record: recPath, rows: rows, unsubscribe: unsubscribe}
	lt.add(srv)
	if model != nil {
		lt.model, lt.llmURL = model, srv.URL+httpwall.ModelPrefix
	}
	// {wall}: the relay on the hub's socket, else chaos wall --hub (docs/ARCHITECTURE.md).
	root, err := h.readyWorkRoot()
	if err != nil {
		lt.stop("the work root cannot be used: " + err.Error())
		return run.HubInfo{}, badInput(err)
	}
	wall, err := stdio.OpenStdioWall(srv, bin, root)
	if err != nil {
		h.logger().Warn("{wall} bridges over HTTP: the hub's socket for the relay could not be made", "trial", t.Trial.ID, "error", err)
	}
	if wall.Stream != nil {
		lt.stream = wall.Stream
		lt.add(wall.Stream)
	}
	if len(s.Scripts) > 0 {
		// The script wall: launchers first on the agent's PATH (shim.go).
		if lt.shim, err = h.openShim(s, hub, t, in.Workspace, bin); err != nil {
			lt.stop("the shim could not start: " + err.Error())
			return run.HubInfo{}, badInput(err)
		}
		lt.add(scriptShim{lt.shim})
	}
	h.keep(t.Key(), lt)

	tokens := agentTokens(wall, bin, srv.URL, task.Prompt, in.Workspace.Dir, in.Workspace.SpecPath, t.Trial.Axes)
	if lt.shim != nil {
		tokens["shim_path"] = lt.shim.Bin
	}
	if s.Browser != nil {
		// The browser wall: Chromium behind the CDP guard, {cdp_url} (browser.go).
		if err := browserProblem(s); err != nil {
			h.drop(t.Key())
			lt.stop("the browser wall was refused: " + err.Error())
			return run.HubInfo{}, badInput(err)
		}
		lb, err := startBrowser(ctx, s, hub, cond, t.Trial.Seed, filepath.Join(h.workRoot(), "browsers"))
		if err != nil {
			h.drop(t.Key())
			lt.stop("the browser wall could not start: " + err.Error())
			return run.HubInfo{}, fmt.Errorf("start the browser wall: %w", err)
		}
		lt.add(lb)
		tokens["cdp_url"] = lb.guard.URL()
	}
	if s.Agent.IsDocker() {
		// The container reaches the hub through its sockets only (runtime_docker.go).
		if err := openContainerHub(s, srv, wall); err != nil {
			h.drop(t.Key())
			lt.stop("the agent's container cannot reach the hub: " + err.Error())
			return run.HubInfo{}, badInput(err)
		}
		tokens = containerTokens(task.Prompt, in.Workspace.Dir, t.Trial.Axes)
		if lt.shim != nil {
			tokens["shim_path"] = ContainerShimDir + "/bin"
		}
	}
	// The command refers to the values through environment variables (agentEnv sets
	// them): no value is ever written into the shell text.
	command, err := fillAgentCommand(template, tokens)
	if err != nil {
		h.drop(t.Key())
		lt.stop("the agent command was refused: " + err.Error())
		return run.HubInfo{}, badInput(err)
	}
	info := run.HubInfo{URL: srv.URL, Tokens: tokens, Command: command}
	h.logger().Info("hub started", "trial", t.Trial.ID, "condition", cond.ID, "url", srv.URL, "model_fault", s.Model.FaultName(), "llm_url", lt.llmURL)
	return info, nil
}

// RemoveStaleSockets removes the wall's socket folders that a killed worker left in the
// work root (and in the temporary folder, where a work root too deep for a socket's path
// sends them): those whose process is gone (stdio.RemoveStaleFolders). A worker does it as
// it starts (worker.NewWorker), so chaos resume or the next run on this machine clears
// what a SIGKILLed run left.
func (h *Host) RemoveStaleSockets() {
	for _, dir := range []string{h.workRoot(), os.TempDir()} {
		if n, err := stdio.RemoveStaleFolders(dir); err != nil {
			h.logger().Warn("a socket folder of a process that is gone was left", "folder", dir, "error", err)
		} else if n > 0 {
			h.logger().Info("removed the socket folders of processes that are gone", "folder", dir, "count", n)
		}
	}
}
