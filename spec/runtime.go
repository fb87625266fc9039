package spec

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"gopkg.in/yaml.v3"
)

// Runtimes are the values of agent.runtime: how the agent is started.
var Runtimes = []string{RuntimeProcess, RuntimeDocker}

const (
	// RuntimeProcess runs the agent as a process of the worker's user (the default).
	RuntimeProcess = "process"
	// RuntimeDocker runs the agent in a Docker container that reaches the wall, the
	// model proxy and its sandbox, and nothing else (docs/spec.md, "agent.runtime").
	RuntimeDocker = "docker"
)

// DefaultPids is the container's process limit when agent.pids is not given.
const DefaultPids = 512

// Container is how a `docker` agent's container is made. The rest (no network, a
// read-only root, no capabilities, the sandbox as the only writable host path) is not
// the spec's to choose.
type Container struct {
	// Image is the image the agent runs in (required). Nothing is pulled: it must be on
	// the worker's Docker engine already (docs/deploy.md says how to make one).
	Image string `json:"image"`
	// User is the numeric UID[:GID] the agent runs as; empty: the worker's own user, or
	// 65534:65534 (nobody) when the worker is root. Never root.
	User string `json:"user,omitempty"`
	// CPUs is how many CPUs the container may use (0: no limit).
	CPUs float64 `json:"cpus,omitempty"`
	// Memory is the container's memory limit in bytes (0: no limit).
	Memory int64 `json:"memory,omitempty"`
	// Pids is the container's process limit (DefaultPids when not given).
	Pids int64 `json:"pids,omitempty"`
	// Mounts are host paths mounted read-only at the same path, for an image that
	// borrows the host's programs (/usr, /lib, /lib64, /bin, /etc/ssl, a node_modules).
	Mounts []string `json:"mounts,omitempty"`
}

// IsDocker says whether the agent runs in a container.
func (a Agent) IsDocker() bool { return a.Runtime == RuntimeDocker }

// RuntimeName is the agent's runtime by name: "process" when none is given.
func (a Agent) RuntimeName() string {
	if a.Runtime == "" {
		return RuntimeProcess
	}
	return a.Runtime
}

// containerKeys are the agent keys that only a `docker` runtime takes.
var containerKeys = []string{"image", "user", "cpus", "memory", "pids", "mounts"}

var numericUser = regexp.MustCompile(`^[0-9]+(:[0-9]+)?$`)

// runtime reads agent.runtime and, for docker, the container's keys from f.
func (d *decoder) runtime(a *Agent, f map[string]*yaml.Node) {
	a.Runtime = d.text(f["runtime"], "agent.runtime")
	switch a.Runtime {
	case "", RuntimeProcess:
		// Kept empty, so that a process agent's spec has the identity it had before
		// runtimes existed (spec.Identity): runs made then still pair with runs made now.
		a.Runtime = ""
	case RuntimeDocker:
	default:
		d.errorf(f["runtime"], "unknown agent.runtime %q%s", a.Runtime, suggest(a.Runtime, Runtimes))
		return
	}
	if a.Runtime != RuntimeDocker {
		for _, k := range containerKeys {
			if f[k] != nil {
				d.errorf(d.keyOf(f[k]), "agent.%s is for a container: it needs agent.runtime: docker", k)
			}
		}
		return
	}
	c := Container{Pids: DefaultPids}
	c.Image = strings.TrimSpace(d.text(f["image"], "agent.image"))
	if c.Image == "" && f["image"] == nil {
		d.errorf(d.keyOf(f["runtime"]), "agent.runtime: docker needs agent.image, the image the agent runs in (built on this machine: nothing is pulled; see docs/deploy.md)")
	} else if c.Image == "" {
		d.errorf(f["image"], "agent.image must name an image, got an empty value")
	}
	if n := f["user"]; n != nil {
		c.User = d.scalarText(n)
		switch {
		case !numericUser.MatchString(c.User):
			d.errorf(n, "agent.user must be a numeric UID or UID:GID (the agent's files in the sandbox are given to it), got %q", c.User)
		case c.User == "0" || strings.HasPrefix(c.User, "0:"):
			d.errorf(n, "agent.user must not be root (0): the container runs the agent as an unprivileged user")
		default:
			if err := CheckContainerGroup(c.User); err != nil {
				d.errorf(n, "agent.user: %v", err)
			}
		}
	}
	if n := f["cpus"]; n != nil {
		v, err := strconv.ParseFloat(d.scalarText(n), 64)
		if err != nil || v <= 0 || v > 1024 {
			d.errorf(n, "agent.cpus must be a number of CPUs above 0, such as 1 or 0.5, got %s", got(deref(n)))
		} else {
			c.CPUs = v
		}
	}
	if n := f["memory"]; n != nil {
		v, err := ParseBytes(d.scalarText(n))
		if err != nil {
			d.errorf(n, "agent.memory %v", err)
		} else if v < 6<<20 {
			d.errorf(n, "agent.memory must be at least 6m (Docker's least), got %s", got(deref(n)))
		} else {
			c.Memory = v
		}
	}
	if n := f["pids"]; n != nil {
		if v, ok := d.whole(n, "agent.pids"); ok {
			if v < 1 {
				d.errorf(n, "agent.pids must be 1 or more: the agent is a process too")
			} else {
				c.Pids = v
			}
		}
	}
	for _, n := range d.textNodes(f["mounts"], "agent.mounts", false) {
		p := n.Value
		if !filepath.IsAbs(p) {
			d.errorf(n, "agent.mounts: %q must be an absolute path on the worker (it is mounted read-only at the same path)", p)
			continue
		}
		if _, err := CheckMount(p); err != nil {
			d.errorf(n, "agent.mounts: %v", err)
			continue
		}
		c.Mounts = append(c.Mounts, filepath.Clean(p))
	}
	a.Container = c
}

// DockerSocket is the path of the Docker engine's socket on this machine: DOCKER_HOST's
// when it names a unix socket, else /var/run/docker.sock.
func DockerSocket() string {
	if h, ok := strings.CutPrefix(os.Getenv("DOCKER_HOST"), "unix://"); ok && h != "" {
		return h
	}
	return "/var/run/docker.sock"
}

// resolve is p as the kernel finds it on this machine: every symbolic link followed and
// every .. taken after the link before it (/var/run/.. is / where /var/run leads to
// /run); p cleaned as written when it does not exist here.
func resolve(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// hostOnly are folders no agent's container sees, nor any folder above them: the
// engine's socket lives in one, and each gives the agent the host (its processes, its
// devices, its configuration).
var hostOnly = []string{"/run", "/var/run", "/proc", "/sys", "/dev", "/etc", "/boot", "/var/lib/docker"}

// hostInside are folders nothing below which is mounted either.
var hostInside = []string{"/run", "/var/run", "/proc", "/sys", "/dev", "/var/lib/docker"}

// CheckMount is the folder agent.mounts names as it is on this machine, every symbolic
// link followed (the engine follows them when it mounts), or why it is never mounted: it
// is /, the folder of the Docker engine's socket or one above it, a host-only folder
// (/run, /proc, /sys, /dev, /etc, ...) or one above it, or inside one. A link inside a
// mounted folder is followed by the kernel inside the container, where / is the
// container's own root, which holds none of these.
func CheckMount(p string) (string, error) {
	r := resolve(p)
	via := ""
	if r != filepath.Clean(p) {
		via = " (it leads to " + r + " through a symbolic link)"
	}
	if r == "/" {
		return "", fmt.Errorf("%s would give the agent the whole host%s: name the folders it needs (/usr, /lib, /etc/ssl)", p, via)
	}
	sock := resolve(DockerSocket())
	for _, h := range append([]string{filepath.Dir(sock)}, hostOnly...) {
		h = resolve(h)
		if r == h || strings.HasPrefix(h, r+"/") {
			what := h
			if h == filepath.Dir(sock) {
				what = h + ", the folder of the Docker engine's socket " + sock
			}
			return "", fmt.Errorf("%s would give the agent the host%s: it holds %s; name the folders it needs (/usr, /lib, /etc/ssl)", p, via, what)
		}
	}
	for _, h := range append([]string{filepath.Dir(sock)}, hostInside...) {
		h = resolve(h)
		if strings.HasPrefix(r, h+"/") {
			return "", fmt.Errorf("%s is inside %s%s, which is never mounted into an agent's container (it would give the agent the host)", p, h, via)
		}
	}
	return r, nil
}

// CheckContainerGroup refuses a UID[:GID] whose group is root's (0) or the Docker
// engine socket's: either would let the agent reach what its group may. With no GID the
// group is the UID, as the worker runs it.
func CheckContainerGroup(user string) error {
	u, g, ok := strings.Cut(user, ":")
	if !ok {
		g = u
	}
	gid, err := strconv.Atoi(g)
	if err != nil {
		return fmt.Errorf("%q is not a numeric UID or UID:GID", user)
	}
	if gid == 0 {
		return fmt.Errorf("group 0 (root) is refused: the agent must not have root's group; give it an unprivileged one (%s:65534)", u)
	}
	sock := DockerSocket()
	if fi, err := os.Stat(sock); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Gid) == gid {
			return fmt.Errorf("group %d is the Docker engine socket's (%s), which would let the agent drive the engine, root on the host: give it another group (%s:65534)", gid, sock, u)
		}
	}
	return nil
}

// scalarText is a scalar's text whatever its tag ("512m", 512, 1.5), or an error.
func (d *decoder) scalarText(n *yaml.Node) string {
	n = deref(n)
	if isNull(n) {
		return ""
	}
	if n.Kind != yaml.ScalarNode {
		d.errorf(n, "must be a single value, got %s", got(n))
		return ""
	}
	return n.Value
}

// ParseBytes reads a size as Docker writes one: a whole number of bytes, or one followed
// by k, m or g (1024-based; "512m", "1g").
func ParseBytes(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	switch {
	case strings.HasSuffix(t, "k"), strings.HasSuffix(t, "kb"):
		mult = 1 << 10
	case strings.HasSuffix(t, "m"), strings.HasSuffix(t, "mb"):
		mult = 1 << 20
	case strings.HasSuffix(t, "g"), strings.HasSuffix(t, "gb"):
		mult = 1 << 30
	}
	t = strings.TrimRight(t, "kmgb")
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil || v <= 0 || v > (1<<50)/mult {
		return 0, fmt.Errorf("must be a size such as 512m or 2g, got %q", s)
	}
	return v * mult, nil
}

// Describe is the container a docker agent runs in, in one line, for --dry-run.
func (c Container) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "image %s, user %s, pids %d", c.Image, orDefault(c.User, "the worker's (nobody when root)"), c.Pids)
	if c.CPUs > 0 {
		fmt.Fprintf(&b, ", cpus %g", c.CPUs)
	}
	if c.Memory > 0 {
		fmt.Fprintf(&b, ", memory %d MiB", c.Memory>>20)
	}
	b.WriteString("; network none, read-only root, no capabilities, no new privileges; writable: the sandbox")
	if len(c.Mounts) > 0 {
		b.WriteString("; read-only: " + strings.Join(c.Mounts, " "))
	}
	return b.String()
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
