package spec

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

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
		switch {
		case !filepath.IsAbs(p):
			d.errorf(n, "agent.mounts: %q must be an absolute path on the worker (it is mounted read-only at the same path)", p)
		case filepath.Clean(p) == "/":
			d.errorf(n, "agent.mounts: / would give the agent the whole host: name the folders it needs (/usr, /lib, /etc/ssl)")
		case slices.Contains([]string{"/var/run", "/run", "/var/run/docker.sock", "/run/docker.sock", "/proc", "/sys", "/dev"}, filepath.Clean(p)):
			d.errorf(n, "agent.mounts: %s is not mounted into an agent's container (it would give the agent the host)", p)
		default:
			c.Mounts = append(c.Mounts, filepath.Clean(p))
		}
	}
	a.Container = c
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
