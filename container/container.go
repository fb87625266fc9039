// Package container runs an agent in a Docker container that reaches the trial's wall and
// model proxy and its sandbox, and nothing else: no network (only the container's own
// loopback), a read-only root, no capabilities, no new privileges, a non-root user, a
// process limit, the sandbox the only writable host path. It knows Docker (the Docker Go
// client) and nothing of trials; trial/runtime_docker.go says what to run.
package container

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"
	"github.com/docker/docker/errdefs"
	"github.com/docker/docker/pkg/stdcopy"
)

// Labels every container this package starts carries; LabelRun and LabelTrial name the
// run and the trial, LabelWorker the worker process that started it (host:pid:start),
// LabelWorkRoot the work root its sandbox is in.
const (
	LabelManaged  = "io.crashwall.chaos"
	LabelRun      = "io.crashwall.chaos.run"
	LabelTrial    = "io.crashwall.chaos.trial"
	LabelWorker   = "io.crashwall.chaos.worker"
	LabelWorkRoot = "io.crashwall.chaos.work-root"
)

// Mount is a host path mounted into the container.
type Mount struct {
	Source, Target string
	// Writable: only the sandbox is.
	Writable bool
}

// Config is one agent's container.
type Config struct {
	Image string
	// User is the numeric UID:GID the agent runs as; never root.
	User   string
	CPUs   float64
	Memory int64
	Pids   int64
	Mounts []Mount
	// WorkDir is the working directory inside the container ("": its root). Never one
	// under /tmp: the engine makes it in the image's root before /tmp's tmpfs is mounted,
	// and the tmpfs takes that /tmp's mode (root's 0755), which the agent cannot write.
	WorkDir string
	// Env is the agent's whole environment (KEY=value): nothing of the worker's is added.
	Env []string
	// Cmd is the first process and its arguments (the relay's serve mode).
	Cmd    []string
	Labels map[string]string
	// TmpSize is the size of the tmpfs on /tmp in bytes (0: 64 MiB).
	TmpSize int64
}

// Client is a connection to a Docker engine.
type Client struct {
	api *client.Client
}

// Dial connects to the Docker engine the environment names (DOCKER_HOST, else the local
// socket) and checks that it answers.
func Dial(ctx context.Context) (*Client, error) {
	c, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, fmt.Errorf("docker: %w", err)
	}
	if _, err := c.Ping(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("no Docker engine answers (start dockerd, or set DOCKER_HOST): %w", err)
	}
	return &Client{api: c}, nil
}

// CheckImage says, before a run starts, why its agents could not start here: no engine
// answers, or the image is not on it (nothing is pulled). nil when both are fine.
func CheckImage(ctx context.Context, image string) error {
	c, err := Dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.api.ImageInspect(ctx, image); err != nil {
		if errdefs.IsNotFound(err) {
			return fmt.Errorf("agent.image %s is not on this Docker engine, and chaos pulls nothing: docker load or docker build it first (docs/deploy.md#agent-containers)", image)
		}
		return fmt.Errorf("agent.image %s: %w", image, err)
	}
	return nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.api.Close() }

// API is the Docker client itself, for what this package does not wrap (building an
// image in a test).
func (c *Client) API() *client.Client { return c.api }

// Exit is how a container's first process ended.
type Exit struct {
	Code int
	Err  error
}

// Timing is how long the engine took over each step of Start: where an agent's
// start-up goes (tests/container BenchmarkContainerPhases).
type Timing struct{ Create, Attach, Start time.Duration }

// Container is a started agent container.
type Container struct {
	ID string
	// Timing is what its start took, step by step.
	Timing Timing
	api    *client.Client
	exit   chan Exit
	// copied is closed when the container's output has been copied out.
	copied chan struct{}
}

// Start creates and starts the container, copies its stdout and stderr to the writers
// until it ends (both are closed then), and returns it. A container that was created but
// could not start is removed.
func (c *Client) Start(ctx context.Context, cfg Config, stdout, stderr io.WriteCloser) (*Container, error) {
	if cfg.User == "" || cfg.User == "0" || strings.HasPrefix(cfg.User, "0:") || strings.HasPrefix(cfg.User, "root") {
		return nil, fmt.Errorf("docker: an agent's container never runs as root (user %q)", cfg.User)
	}
	// The group is always given (UID:GID), so that the image's /etc/group adds no
	// supplementary group to the agent's user; and it is never root's.
	if _, g, ok := strings.Cut(cfg.User, ":"); !ok || g == "" || g == "0" || g == "root" {
		return nil, fmt.Errorf("docker: an agent's container runs as UID:GID with a group other than root's (user %q)", cfg.User)
	}
	tmp := cfg.TmpSize
	if tmp <= 0 {
		tmp = 64 << 20
	}
	pids := cfg.Pids
	host := &container.HostConfig{
		NetworkMode:    "none",
		ReadonlyRootfs: true,
		CapDrop:        []string{"ALL"},
		SecurityOpt:    []string{"no-new-privileges"},
		AutoRemove:     true, // an agent that ends by itself (its worker dead) leaves nothing
		Tmpfs:          map[string]string{"/tmp": "rw,nosuid,nodev,noexec,mode=1777,size=" + strconv.FormatInt(tmp, 10)},
		Resources: container.Resources{
			PidsLimit: &pids,
			NanoCPUs:  int64(cfg.CPUs * 1e9),
			Memory:    cfg.Memory,
		},
		IpcMode: "private",
	}
	if cfg.Memory > 0 {
		host.Resources.MemorySwap = cfg.Memory // no swap beyond the limit
	}
	for _, m := range cfg.Mounts {
		// NonRecursive: only the folder's own filesystem, never a mount below it (a
		// /run bound under a mounted folder stays out); private: nothing mounted on the
		// host later appears inside.
		host.Mounts = append(host.Mounts, mount.Mount{Type: mount.TypeBind, Source: m.Source, Target: m.Target, ReadOnly: !m.Writable,
			BindOptions: &mount.BindOptions{Propagation: mount.PropagationRPrivate, NonRecursive: true}})
	}
	conf := &container.Config{
		Image:           cfg.Image,
		User:            cfg.User,
		Env:             cfg.Env,
		Cmd:             cfg.Cmd,
		Entrypoint:      []string{}, // the image's entrypoint is not the agent
		WorkingDir:      cfg.WorkDir,
		Labels:          cfg.Labels,
		NetworkDisabled: true,
		AttachStdout:    true,
		AttachStderr:    true,
	}
	t0 := time.Now()
	created, err := c.api.ContainerCreate(ctx, conf, host, &network.NetworkingConfig{}, nil, "")
	if err != nil {
		return nil, fmt.Errorf("docker: create the agent's container from %s: %w", cfg.Image, err)
	}
	k := &Container{ID: created.ID, api: c.api, exit: make(chan Exit, 1), copied: make(chan struct{})}
	k.Timing.Create = time.Since(t0)
	t0 = time.Now()
	fail := func(err error) (*Container, error) {
		k.Remove(context.WithoutCancel(ctx))
		return nil, err
	}
	att, err := c.api.ContainerAttach(ctx, k.ID, container.AttachOptions{Stream: true, Stdout: true, Stderr: true})
	if err != nil {
		return fail(fmt.Errorf("docker: attach to the agent's container: %w", err))
	}
	k.Timing.Attach = time.Since(t0)
	// Waiting starts before the container does, so its exit is never missed; the wait
	// outlives ctx (the activity's), which may be cancelled while the agent is stopped.
	waitCtx, stopWait := context.WithCancel(context.WithoutCancel(ctx))
	waitC, errC := c.api.ContainerWait(waitCtx, k.ID, container.WaitConditionNextExit)
	go func() {
		defer close(k.copied)
		stdcopy.StdCopy(stdout, stderr, att.Reader)
		att.Close()
		stdout.Close()
		stderr.Close()
	}()
	t0 = time.Now()
	if err := c.api.ContainerStart(ctx, k.ID, container.StartOptions{}); err != nil {
		stopWait()
		att.Close()
		return fail(fmt.Errorf("docker: start the agent's container: %w", err))
	}
	k.Timing.Start = time.Since(t0)
	go func() {
		defer stopWait()
		select {
		case w := <-waitC:
			e := Exit{Code: int(w.StatusCode)}
			if w.Error != nil && w.Error.Message != "" {
				e.Err = errors.New(w.Error.Message)
			}
			k.exit <- e
		case err := <-errC:
			k.exit <- Exit{Code: -1, Err: fmt.Errorf("docker: wait for the agent's container: %w", err)}
		}
	}()
	return k, nil
}

// Done delivers the container's exit once.
func (k *Container) Done() <-chan Exit { return k.exit }

// Signal sends sig ("TERM", "KILL") to the container's first process, which passes it on
// to the agent. A container that is already gone is not an error.
func (k *Container) Signal(ctx context.Context, sig string) error {
	err := k.api.ContainerKill(ctx, k.ID, sig)
	if err != nil && (errdefs.IsNotFound(err) || errdefs.IsConflict(err)) {
		return nil // gone, or not running
	}
	return err
}

// WaitOutput waits up to d for the container's output to be copied out.
func (k *Container) WaitOutput(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-k.copied:
	case <-t.C:
	}
}

// Remove kills and removes the container; one that is already gone is not an error.
func (k *Container) Remove(ctx context.Context) error {
	return remove(ctx, k.api, k.ID)
}

func remove(ctx context.Context, api *client.Client, id string) error {
	err := api.ContainerRemove(ctx, id, container.RemoveOptions{Force: true, RemoveVolumes: true})
	if err == nil || errdefs.IsNotFound(err) || (errdefs.IsConflict(err) && strings.Contains(err.Error(), "already in progress")) {
		return nil
	}
	return fmt.Errorf("docker: remove the agent's container %.12s: %w", id, err)
}

// List returns the agent containers (running or not) that carry every label given
// (key=value, or key alone for any value).
func (c *Client) List(ctx context.Context, labels ...string) ([]container.Summary, error) {
	args := filters.NewArgs(filters.Arg("label", LabelManaged))
	for _, l := range labels {
		args.Add("label", l)
	}
	return c.api.ContainerList(ctx, container.ListOptions{All: true, Filters: args})
}

// RemoveWhere removes every agent container that carries the labels given and whose
// labels match says to remove, and returns how many it removed.
func (c *Client) RemoveWhere(ctx context.Context, match func(labels map[string]string) bool, labels ...string) (int, error) {
	list, err := c.List(ctx, labels...)
	if err != nil {
		return 0, fmt.Errorf("docker: list agent containers: %w", err)
	}
	var errs []error
	n := 0
	for _, s := range list {
		if !match(s.Labels) {
			continue
		}
		if err := remove(ctx, c.api, s.ID); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}
