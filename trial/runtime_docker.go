package trial

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/crashwall/chaos/container"
	"github.com/crashwall/chaos/proxies/httpwall"
	"github.com/crashwall/chaos/proxies/stdio"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
)

// Where a container finds what the worker mounts into it (read-only), and the loopback
// address its relay serves {wall_url} and {llm_url} on:
//
//	/chaos/relay       cmd/chaos-relay (static): the first process, and {wall}
//	/chaos/chaos       the chaos binary, {chaos}
//	/chaos/spec.yaml   {spec}
//	/chaos/hub/hub     the hub's MCP stream (the relay's {wall})
//	/chaos/hub/http    the hub's HTTP server ({wall_url}, {llm_url} = {wall_url}/llm)
//	/chaos/shim        the script shim's folder: launchers in bin ({shim_path}), its socket hub
//	SANDBOX            the sandbox, at its own path, the working directory: the one writable host path
const (
	ContainerRelay   = "/chaos/relay"
	ContainerChaos   = "/chaos/chaos"
	ContainerSpec    = "/chaos/spec.yaml"
	ContainerHubDir  = "/chaos/hub"
	ContainerWallURL = "http://127.0.0.1:7070"
	// httpSocket is the name of the hub's HTTP socket beside its MCP stream.
	httpSocket = "http"
)

// containerPath is the PATH of an agent's container.
const containerPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// nobody is the user an agent's container runs as when the spec names none and the
// worker is root.
const nobody = "65534:65534"

// containerUser is the UID:GID the agent's container runs as: the spec's agent.user, else
// the worker's own user, else nobody when the worker is root.
func containerUser(s *spec.Spec) (uid, gid int, user string) {
	user = s.Agent.Container.User
	if user == "" {
		if os.Getuid() == 0 {
			user = nobody
		} else {
			user = fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid())
		}
	}
	u, g, ok := strings.Cut(user, ":")
	uid, _ = strconv.Atoi(u)
	gid = uid
	if ok {
		gid, _ = strconv.Atoi(g)
	}
	return uid, gid, fmt.Sprintf("%d:%d", uid, gid)
}

// containerTokens are the tokens of an agent in a container: the same as a process's
// (agentTokens), with the wall, the model proxy, chaos and the spec where the container
// sees them.
func containerTokens(prompt, sandbox string, axes map[string]string) map[string]string {
	sock := ContainerHubDir + "/hub"
	wall := stdio.StdioWall{Command: stdio.RelayCommand(ContainerRelay, sock), MCPConfig: stdio.RelayMCPConfig(ContainerRelay, sock),
		CodexConfig: stdio.RelayCodexConfig(ContainerRelay, sock)}
	return agentTokens(wall, ContainerChaos, ContainerWallURL, prompt, sandbox, ContainerSpec, axes)
}

// openContainerHub makes the hub at srv reachable from an agent's container: its HTTP
// server on a unix socket beside the relay's MCP stream, the folder and both sockets
// given to the container's user. It needs the relay (the stream exists only with one).
func openContainerHub(s *spec.Spec, srv *httpwall.Server, wall stdio.StdioWall) error {
	if wall.Stream == nil {
		return errors.New("agent.runtime docker needs chaos-relay, built static (CGO_ENABLED=0), next to the chaos binary (make build, go install ./cmd/...): the container reaches the wall only through it")
	}
	dir := filepath.Dir(wall.Stream.Path)
	sock := filepath.Join(dir, httpSocket)
	if err := srv.ServeUnix(sock, 0o600); err != nil {
		return err
	}
	uid, gid, _ := containerUser(s)
	if uid == os.Getuid() {
		return nil
	}
	// Another user: a root worker gives it the folder and the sockets; a worker that is
	// not root cannot, and opens them to every user of this host instead (docs/deploy.md).
	if os.Getuid() == 0 {
		for _, p := range []string{dir, wall.Stream.Path, sock} {
			if err := os.Chown(p, uid, gid); err != nil {
				return fmt.Errorf("give the hub's sockets to the agent's user %d:%d: %w", uid, gid, err)
			}
		}
		return nil
	}
	if err := os.Chmod(dir, 0o711); err != nil {
		return err
	}
	for _, p := range []string{wall.Stream.Path, sock} {
		if err := os.Chmod(p, 0o666); err != nil {
			return err
		}
	}
	return nil
}

// dockerRuntime runs the agent in a container (package container): no network but its
// own loopback, where the relay serves {wall_url} and {llm_url}; a read-only root; no
// capabilities; a non-root user; a process limit; labelled with the run, the trial and
// the worker, so that a container whose worker died is found and removed.
type dockerRuntime struct{ h *Host }

func (r *dockerRuntime) start(ctx context.Context, s *spec.Spec, in run.AgentInput, stdout, stderr *capturedStream) (runningAgent, error) {
	cli, err := r.h.dockerClient(ctx)
	if err != nil {
		return nil, err
	}
	// An earlier attempt's container of this trial goes first.
	if _, err := cli.RemoveWhere(ctx, func(map[string]string) bool { return true },
		container.LabelRun+"="+in.Trial.RunID, container.LabelTrial+"="+in.Trial.Trial.ID); err != nil {
		r.h.logger().Warn("an earlier container of this trial could not be removed", "trial", in.Trial.Trial.ID, "error", err)
	}
	bin, err := r.h.chaosBin()
	if err != nil {
		return nil, err
	}
	relay := stdio.FindRelay(bin)
	if relay == "" {
		return nil, agentError("agent.runtime docker needs chaos-relay next to the chaos binary " + bin)
	}
	if err := staticBinary(relay); err != nil {
		return nil, agentError(err.Error())
	}
	lt := r.h.live(in.Trial.Key())
	if lt == nil || lt.stream == nil {
		return nil, agentError("the trial's hub has no socket for the container (StartHub did not run on this worker)")
	}
	specEnv, err := s.Agent.ExpandEnv(nil)
	if err != nil {
		return nil, agentError(err.Error() + " on this worker")
	}
	uid, gid, user := containerUser(s)
	if err := spec.CheckContainerGroup(user); err != nil {
		return nil, agentError("the agent's container user " + user + ": " + err.Error() + " (on this worker)")
	}
	sandbox := in.Workspace.Dir
	chowned := false
	if uid != os.Getuid() && os.Getuid() == 0 {
		if err := chownTree(sandbox, uid, gid); err != nil {
			return nil, fmt.Errorf("give the sandbox to the agent's user %s: %w", user, err)
		}
		chowned = true
	}
	c := s.Agent.Container
	mounts := []container.Mount{
		{Source: relay, Target: ContainerRelay},
		{Source: bin, Target: ContainerChaos},
		{Source: filepath.Dir(lt.stream.Path), Target: ContainerHubDir},
		{Source: sandbox, Target: sandbox, Writable: true},
	}
	if in.Workspace.SpecPath != "" {
		mounts = append(mounts, container.Mount{Source: in.Workspace.SpecPath, Target: ContainerSpec})
	}
	if lt.shim != nil {
		mounts = append(mounts, container.Mount{Source: lt.shim.Dir, Target: ContainerShimDir}) // shim.go
	}
	for _, m := range c.Mounts {
		if _, err := os.Stat(m); err != nil {
			return nil, agentError(fmt.Sprintf("agent.mounts: %s is not on this worker: %v", m, err))
		}
		// Judged again as this worker's kernel finds it, and mounted from where it leads,
		// so what was judged is what is mounted.
		resolved, err := spec.CheckMount(m)
		if err != nil {
			return nil, agentError("agent.mounts: " + err.Error() + " (on this worker)")
		}
		mounts = append(mounts, container.Mount{Source: resolved, Target: m})
	}
	base := []string{"PATH=" + containerPath, "HOME=" + sandbox, "TMPDIR=/tmp"}
	httpSock := ContainerHubDir + "/" + httpSocket
	k, err := cli.Start(ctx, container.Config{
		Image: c.Image, User: user, CPUs: c.CPUs, Memory: c.Memory, Pids: c.Pids,
		Mounts: mounts, Env: agentEnv(base, specEnv, in),
		Cmd: []string{ContainerRelay, "serve", "--tcp", strings.TrimPrefix(ContainerWallURL, "http://") + "=" + httpSock,
			"--watch", httpSock, "--", "sh", "-c", inSandbox(sandbox, in.Hub.Command)},
		Labels: map[string]string{
			container.LabelManaged:  "1",
			container.LabelRun:      in.Trial.RunID,
			container.LabelTrial:    in.Trial.Trial.ID,
			container.LabelWorker:   workerLabel(),
			container.LabelWorkRoot: r.h.workRoot(),
		},
	}, stdout.w, stderr.w)
	if err != nil {
		return nil, err
	}
	d := &dockerAgent{k: k, ended: make(chan struct{}), log: r.h.logger().With("trial", in.Trial.Trial.ID)}
	if chowned {
		d.sandbox = sandbox
	}
	go func() {
		d.exit = <-k.Done()
		close(d.ended)
	}()
	return d, nil
}

// inSandbox is the agent's command run from its sandbox. The container's working folder
// stays its root: the engine makes a working folder, and the folders above it, in the
// image's root before /tmp's tmpfs is mounted, and the tmpfs then takes the mode of the
// /tmp it made (root's, 0755), so a sandbox under the worker's /tmp would leave the
// agent's user a /tmp it cannot write (Claude Code then exits 0 having done nothing).
func inSandbox(sandbox, command string) string {
	return "cd -- " + spec.ShellQuote(sandbox) + " || exit 126\n" + command
}

type dockerAgent struct {
	log *slog.Logger
	// sandbox, when set, was given to the container's user and is given back once the
	// agent has ended (git and Teardown work on it as the worker).
	sandbox string
	k       *container.Container
	ended   chan struct{}
	exit    container.Exit
}

func (d *dockerAgent) done() <-chan struct{} { return d.ended }
func (d *dockerAgent) describe() string      { return "container " + d.k.ID[:12] }

// stop sends SIGTERM to the relay, which passes it to the agent's process group, and
// SIGKILL after the grace period; the container ends with its first process.
func (d *dockerAgent) stop() {
	ctx := context.Background()
	d.k.Signal(ctx, "TERM")
	grace := time.NewTimer(stopGrace)
	defer grace.Stop()
	select {
	case <-d.ended:
		return
	case <-grace.C:
	}
	d.k.Signal(ctx, "KILL")
	select {
	case <-d.ended:
	case <-time.After(2 * stopGrace):
		// An engine that does not report the exit: removing the container ends it.
	}
}

func (d *dockerAgent) finish(ctx context.Context) int {
	d.k.WaitOutput(stopGrace)
	if err := d.k.Remove(context.WithoutCancel(ctx)); err != nil {
		d.log.Warn("the agent's container could not be removed", "container", d.k.ID, "error", err)
	}
	if d.sandbox != "" {
		if err := chownTree(d.sandbox, os.Getuid(), os.Getgid()); err != nil {
			d.log.Warn("the sandbox could not be given back to the worker", "sandbox", d.sandbox, "error", err)
		}
	}
	select {
	case <-d.ended:
		return d.exit.Code
	default:
		return 128 + 9
	}
}

// dockerClient is the worker's connection to its Docker engine, made at the worker's
// start (ConnectDocker) or else on first use; making it also removes the containers of
// this host's workers that are dead.
func (h *Host) dockerClient(ctx context.Context) (*container.Client, error) {
	h.dockerMu.Lock()
	defer h.dockerMu.Unlock()
	if h.docker != nil {
		return h.docker, nil
	}
	cli, err := container.Dial(ctx)
	if err != nil {
		return nil, agentError("agent.runtime docker: " + err.Error())
	}
	h.docker = cli
	if n, err := RemoveOrphanContainers(ctx, cli, h.workRoot()); err != nil {
		h.logger().Warn("containers of dead workers could not all be removed", "error", err)
	} else if n > 0 {
		h.logger().Info("removed agent containers whose worker is dead", "count", n)
	}
	return cli, nil
}

// ConnectDocker connects the worker to the Docker engine, which removes the containers
// this host's dead workers left (see dockerClient). A worker calls it once as it starts,
// so that a killed worker's containers go before any trial runs; with no engine
// answering it returns the error and the worker goes on (a worker that runs no docker
// trial needs none; the first docker trial tries again).
func (h *Host) ConnectDocker(ctx context.Context) error {
	_, err := h.dockerClient(ctx)
	return err
}

// RemoveOrphanContainers removes the agent containers that a worker on this host with
// the work root root started and that outlived it (the worker was killed): their trials
// are over, since a trial's hub dies with its worker. The orphans of another work root
// (another user's, another TMPDIR's) are left to the workers that share it.
func RemoveOrphanContainers(ctx context.Context, cli *container.Client, root string) (int, error) {
	host, _ := os.Hostname()
	return cli.RemoveWhere(ctx, func(labels map[string]string) bool {
		h, rest, ok := strings.Cut(labels[container.LabelWorker], ":")
		return ok && h == host && !processAlive(rest)
	}, container.LabelWorkRoot+"="+root)
}

// removeTrialContainers removes the containers of one trial (Teardown: the trial is over).
func (h *Host) removeTrialContainers(ctx context.Context, in run.TrialInput) error {
	cli, err := h.dockerClient(ctx)
	if err != nil {
		return err
	}
	_, err = cli.RemoveWhere(ctx, func(map[string]string) bool { return true },
		container.LabelRun+"="+in.RunID, container.LabelTrial+"="+in.Trial.ID)
	return err
}

var workerOnce = sync.OnceValue(func() string {
	host, _ := os.Hostname()
	return host + ":" + strconv.Itoa(os.Getpid()) + ":" + processStart(os.Getpid())
})

// workerLabel names this worker process: host:pid:start, the start telling a pid reused
// by another process apart.
func workerLabel() string { return workerOnce() }

// processAlive says whether "pid:start" is a process that still runs on this host.
func processAlive(pidStart string) bool {
	pid, start, _ := strings.Cut(pidStart, ":")
	p, err := strconv.Atoi(pid)
	if err != nil || p <= 0 {
		return false
	}
	got := processStart(p)
	return got != "" && got == start
}

// processStart is the start time of process pid (field 22 of /proc/PID/stat, in clock
// ticks since boot), or "" when there is no such process.
func processStart(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

// staticBinary refuses a relay that needs a dynamic loader: an image without the host's
// libraries could not start it.
func staticBinary(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return nil // not ELF (another system): let Docker say
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is linked dynamically: build it with CGO_ENABLED=0 (make build does), so that it starts in any image", path)
		}
	}
	return nil
}

// chownTree gives dir and everything in it to uid:gid (not following links).
func chownTree(dir string, uid, gid int) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}
