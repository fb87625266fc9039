package spec

import (
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestParseRuntime(t *testing.T) {
	agent := func(fields string) string {
		return edit(`agent: {command: "run {task}"}`, "agent:\n  command: \"run {task}\"\n"+fields)
	}
	t.Run("process is the default", func(t *testing.T) {
		s, err := Parse("spec.yaml", []byte(base))
		if err != nil {
			t.Fatal(err)
		}
		if s.Agent.RuntimeName() != RuntimeProcess || s.Agent.IsDocker() || !reflect.DeepEqual(s.Agent.Container, Container{}) {
			t.Errorf("runtime %q, container %+v", s.Agent.Runtime, s.Agent.Container)
		}
	})
	t.Run("process as written keeps the spec's identity", func(t *testing.T) {
		a, _ := Parse("spec.yaml", []byte(base))
		b, err := Parse("spec.yaml", []byte(agent("  runtime: process\n")))
		if err != nil {
			t.Fatal(err)
		}
		c, _ := Parse("spec.yaml", []byte(agent("")))
		if b.Identity() != c.Identity() || b.Agent.RuntimeName() != RuntimeProcess {
			t.Errorf("runtime: process changed the identity (%v)", IdentityDiff(b, c))
		}
		if strings.Contains(string(identityJSON(a)), "runtime") || strings.Contains(string(identityJSON(a)), "container") {
			t.Errorf("a process agent's identity names a runtime: %s", identityJSON(a))
		}
	})
	t.Run("a docker run pairs with a process run", func(t *testing.T) {
		p, _ := Parse("spec.yaml", []byte(base))
		d, err := Parse("spec.yaml", []byte(edit(`agent: {command: "run {task}"}`, `agent: {command: "run {task}", runtime: docker, image: a, pids: 9}`)))
		if err != nil {
			t.Fatal(err)
		}
		if p.Identity() != d.Identity() {
			t.Errorf("the runtime changed the identity: %v", IdentityDiff(p, d))
		}
	})
	t.Run("docker with every key", func(t *testing.T) {
		s, err := Parse("spec.yaml", []byte(agent("  runtime: docker\n  image: my-agent:1\n  user: \"1000:1001\"\n  cpus: 1.5\n  memory: 512m\n  pids: 64\n  mounts: [/usr, /lib/]\n")))
		if err != nil {
			t.Fatal(err)
		}
		want := Container{Image: "my-agent:1", User: "1000:1001", CPUs: 1.5, Memory: 512 << 20, Pids: 64, Mounts: []string{"/usr", "/lib"}}
		if !s.Agent.IsDocker() || !reflect.DeepEqual(s.Agent.Container, want) {
			t.Errorf("got %q %+v\nwant docker %+v", s.Agent.Runtime, s.Agent.Container, want)
		}
	})
	t.Run("docker defaults", func(t *testing.T) {
		s, err := Parse("spec.yaml", []byte(agent("  runtime: docker\n  image: a\n")))
		if err != nil {
			t.Fatal(err)
		}
		if want := (Container{Image: "a", Pids: DefaultPids}); !reflect.DeepEqual(s.Agent.Container, want) {
			t.Errorf("got %+v, want %+v", s.Agent.Container, want)
		}
	})
	for _, c := range []struct{ name, fields, want string }{
		{"unknown runtime", "  runtime: dokcer\n", `spec.yaml:5: unknown agent.runtime "dokcer" (did you mean docker?)`},
		{"docker without an image", "  runtime: docker\n", `spec.yaml:5: agent.runtime: docker needs agent.image`},
		{"image without docker", "  image: a\n", `spec.yaml:5: agent.image is for a container: it needs agent.runtime: docker`},
		{"root user", "  runtime: docker\n  image: a\n  user: \"0:0\"\n", `spec.yaml:7: agent.user must not be root (0)`},
		{"named user", "  runtime: docker\n  image: a\n  user: node\n", `spec.yaml:7: agent.user must be a numeric UID or UID:GID`},
		{"cpus", "  runtime: docker\n  image: a\n  cpus: many\n", `spec.yaml:7: agent.cpus must be a number of CPUs above 0`},
		{"memory", "  runtime: docker\n  image: a\n  memory: lots\n", `spec.yaml:7: agent.memory must be a size such as 512m or 2g, got "lots"`},
		{"memory too small", "  runtime: docker\n  image: a\n  memory: 1k\n", `spec.yaml:7: agent.memory must be at least 6m`},
		{"pids", "  runtime: docker\n  image: a\n  pids: 0\n", `spec.yaml:7: agent.pids must be 1 or more`},
		{"relative mount", "  runtime: docker\n  image: a\n  mounts: [usr]\n", `spec.yaml:7: agent.mounts: "usr" must be an absolute path`},
		{"root mount", "  runtime: docker\n  image: a\n  mounts: [/]\n", `spec.yaml:7: agent.mounts: / would give the agent the whole host`},
		{"docker socket mount", "  runtime: docker\n  image: a\n  mounts: [/var/run/docker.sock]\n", `spec.yaml:7: agent.mounts: /var/run/docker.sock is inside /run`},
		{"docker socket's folder", "  runtime: docker\n  image: a\n  mounts: [/var/run]\n", `spec.yaml:7: agent.mounts: /var/run would give the agent the host (it leads to /run through a symbolic link): it holds /run, the folder of the Docker engine's socket /run/docker.sock`},
		{"a folder above /run", "  runtime: docker\n  image: a\n  mounts: [/var/../var/run/..]\n", `spec.yaml:7: agent.mounts: /var/../var/run/.. would give the agent the whole host (it leads to / through a symbolic link)`},
		{"/etc", "  runtime: docker\n  image: a\n  mounts: [/etc/]\n", `spec.yaml:7: agent.mounts: /etc/ would give the agent the host: it holds /etc;`},
		{"group 0", "  runtime: docker\n  image: a\n  user: \"65534:0\"\n", `spec.yaml:7: agent.user: group 0 (root) is refused`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("spec.yaml", []byte(agent(c.fields)))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v\nwant %s", err, c.want)
			}
		})
	}
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"512m": 512 << 20, "2g": 2 << 30, "64k": 64 << 10, "1048576": 1 << 20, "1GB": 1 << 30} {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "m", "-1m", "1.5g", "12x"} {
		if _, err := ParseBytes(in); err == nil {
			t.Errorf("ParseBytes(%q): no error", in)
		}
	}
}

// TestContainerRefusals: what agent.mounts and agent.user name is judged as the kernel
// would find it: a link to / or to the engine socket's folder, a folder above that
// socket, and the socket's group are refused, each with the line it is on.
func TestContainerRefusals(t *testing.T) {
	agent := func(fields string) string {
		return edit(`agent: {command: "run {task}"}`, "agent:\n  command: \"run {task}\"\n"+fields)
	}
	dir := t.TempDir()
	sockDir := filepath.Join(dir, "engine")
	os.Mkdir(sockDir, 0o755)
	sock := filepath.Join(sockDir, "docker.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	t.Setenv("DOCKER_HOST", "unix://"+sock)
	gid := os.Getgid()
	if os.Getuid() == 0 {
		gid = 4242
		if err := os.Chown(sock, 0, gid); err != nil {
			t.Fatal(err)
		}
	}
	allowed := filepath.Join(dir, "allowed")
	os.Mkdir(allowed, 0o755)
	os.Symlink("/", filepath.Join(dir, "root-link"))
	os.Symlink(sockDir, filepath.Join(allowed, "engine-link"))
	for _, c := range []struct{ name, fields, want string }{
		{"a link to /", "  mounts: [" + dir + "/root-link]\n", "spec.yaml:7: agent.mounts: " + dir + "/root-link would give the agent the whole host (it leads to / through a symbolic link)"},
		{"the socket's folder", "  mounts: [" + sockDir + "]\n", "spec.yaml:7: agent.mounts: " + sockDir + " would give the agent the host: it holds " + sockDir + ", the folder of the Docker engine's socket " + sock},
		{"a link to the socket's folder", "  mounts: [" + allowed + "/engine-link]\n", "(it leads to " + sockDir + " through a symbolic link): it holds " + sockDir},
		{"a folder above the socket", "  mounts: [" + dir + "]\n", "spec.yaml:7: agent.mounts: " + dir + " would give the agent the host: it holds " + sockDir},
		{"the socket itself through ..", "  mounts: [" + allowed + "/engine-link/../engine/docker.sock]\n", "is inside " + sockDir},
		{"the socket's group", "  user: \"65534:" + strconv.Itoa(gid) + "\"\n", "spec.yaml:7: agent.user: group " + strconv.Itoa(gid) + " is the Docker engine socket's (" + sock + ")"},
		{"the socket's group as the UID alone", "  user: \"" + strconv.Itoa(gid) + "\"\n", "agent.user: group " + strconv.Itoa(gid) + " is the Docker engine socket's"},
		{"group 0", "  user: \"65534:0\"\n", "spec.yaml:7: agent.user: group 0 (root) is refused"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("spec.yaml", []byte(agent("  runtime: docker\n  image: a\n"+c.fields)))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v\nwant %s", err, c.want)
			}
		})
	}
	// A folder that holds a link to / is mounted: the kernel follows that link inside the
	// container, to the container's own root (tests/container TestMountLinks).
	s, err := Parse("spec.yaml", []byte(agent("  runtime: docker\n  image: a\n  mounts: ["+allowed+"]\n")))
	if err != nil || !reflect.DeepEqual(s.Agent.Container.Mounts, []string{allowed}) {
		t.Errorf("a folder holding links: %v %+v", err, s)
	}
}
