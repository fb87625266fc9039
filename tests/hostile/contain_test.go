package hostile_test

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/tests/testkit"
)

// containSpec is a spec whose agent runs in a container with the given agent keys.
func containSpec(agentKeys, command string) string {
	return "name: hostile\ntask: look around\ntools: [{name: note, effect: write}]\nagent:\n  command: " + yamlQuote(command) +
		"\n  timeout: 60s\n  runtime: docker\n  image: " + hostileImage + "\n" + agentKeys
}

var hostileImage = "chaos-hostile-agent:" + strconv.Itoa(os.Getpid())

// engineSocket is a unix socket standing in for the Docker engine's (DOCKER_HOST), in a
// folder of its own, with a group of its own when the test runs as root.
func engineSocket(t *testing.T, dir string) (sock string, gid int) {
	t.Helper()
	os.MkdirAll(filepath.Join(dir, "engine"), 0o755)
	sock = filepath.Join(dir, "engine", "docker.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	gid = os.Getgid()
	if os.Getuid() == 0 {
		gid = 4343
		os.Chown(sock, 0, gid)
	}
	return sock, gid
}

// TestHostileContainment (issue 28 item 2): every way an agent.mounts or agent.user
// could hand a container agent the Docker engine's socket, by path or by group, is
// refused when the spec loads, with its line and exit 1, judged as the kernel finds the
// path (links followed, .. taken after them).
func TestHostileContainment(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		keys func(w *world, sock string, gid int) string
		want func(w *world, sock string, gid int) string
	}{
		{name: "mount a link to /",
			keys: func(w *world, _ string, _ int) string { return "  mounts: [" + w.specDir + "/root]\n" },
			want: func(w *world, _ string, _ int) string {
				return "hostile.yaml:9: agent.mounts: " + w.specDir + "/root would give the agent the whole host (it leads to / through a symbolic link)"
			}},
		{name: "mount the socket's folder",
			keys: func(w *world, sock string, _ int) string { return "  mounts: [" + filepath.Dir(sock) + "]\n" },
			want: func(w *world, sock string, _ int) string {
				return "hostile.yaml:9: agent.mounts: " + filepath.Dir(sock) + " would give the agent the host: it holds " + filepath.Dir(sock) + ", the folder of the Docker engine's socket " + sock
			}},
		{name: "mount a link to the socket's folder",
			keys: func(w *world, _ string, _ int) string { return "  mounts: [" + w.specDir + "/engine]\n" },
			want: func(w *world, sock string, _ int) string {
				return "hostile.yaml:9: agent.mounts: " + w.specDir + "/engine would give the agent the host (it leads to " + filepath.Dir(sock) + " through a symbolic link)"
			}},
		{name: "mount a folder above the socket's",
			keys: func(w *world, sock string, _ int) string {
				return "  mounts: [" + filepath.Dir(filepath.Dir(sock)) + "]\n"
			},
			want: func(w *world, sock string, _ int) string {
				return "it holds " + filepath.Dir(sock) + ", the folder of the Docker engine's socket"
			}},
		{name: "mount the host's /run",
			keys: func(w *world, _ string, _ int) string { return "  mounts: [/var/run]\n" },
			want: func(w *world, _ string, _ int) string {
				return "hostile.yaml:9: agent.mounts: /var/run would give the agent the host"
			}},
		{name: "mount / by ..",
			keys: func(w *world, _ string, _ int) string { return "  mounts: [" + w.specDir + "/root/usr/..]\n" },
			want: func(w *world, _ string, _ int) string {
				return "would give the agent the whole host (it leads to / through a symbolic link)"
			}},
		{name: "user in the socket's group",
			keys: func(w *world, _ string, gid int) string { return "  user: \"65534:" + strconv.Itoa(gid) + "\"\n" },
			want: func(w *world, sock string, gid int) string {
				return "hostile.yaml:9: agent.user: group " + strconv.Itoa(gid) + " is the Docker engine socket's (" + sock + ")"
			}},
		{name: "user in group 0",
			keys: func(w *world, _ string, _ int) string { return "  user: \"65534:0\"\n" },
			want: func(w *world, _ string, _ int) string { return "hostile.yaml:9: agent.user: group 0 (root) is refused" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			sock, gid := engineSocket(t, w.tmp)
			os.Symlink("/", filepath.Join(w.specDir, "root"))
			os.Symlink(filepath.Dir(sock), filepath.Join(w.specDir, "engine"))
			path := filepath.Join(w.specDir, "hostile.yaml")
			os.WriteFile(path, []byte(containSpec(tt.keys(w, sock, gid), "touch "+w.pwned())), 0o644)
			env := append(append([]string{}, w.env...), "DOCKER_HOST=unix://"+sock)
			r := testkit.Run(t, chaosBin, env, 2*time.Minute, "run", path, "--dry-run", "--out", filepath.Join(w.tmp, "run"))
			if want := tt.want(w, sock, gid); r.Code != 1 || !strings.Contains(r.Stderr, want) {
				t.Errorf("exit %d, want 1\nstderr:\n%s\nwant it to contain %q", r.Code, r.Stderr, want)
			}
			w.check(t)
		})
	}
}

var imageOnce sync.Once
var imageErr error

// TestHostileContainerLinks (issue 28 item 2), from inside a real container: a mounted
// folder holding links to /, to the engine socket's folder and to the socket itself,
// and an image whose /etc/group makes the agent's user a member of the socket's group.
// The kernel follows each link inside the container, where none leads to the socket,
// and the agent has neither the socket's group nor root's.
func TestHostileContainerLinks(t *testing.T) {
	t.Parallel()
	imageOnce.Do(func() { imageErr = testkit.BuildAgentImage(hostileImage) })
	if imageErr != nil {
		if os.Getenv("CHAOS_REQUIRE_DOCKER") != "" {
			t.Fatalf("CHAOS_REQUIRE_DOCKER is set but the agent image could not be made: %v", imageErr)
		}
		t.Skipf("no Docker engine: %v", imageErr)
	}
	t.Cleanup(func() { testkit.RemoveImage(hostileImage) })
	w := newWorld(t)
	sock := spec.DockerSocket()
	fi, err := os.Stat(sock)
	if err != nil {
		t.Fatal(err)
	}
	gid := int(fi.Sys().(*syscall.Stat_t).Gid)
	links := filepath.Join(w.specDir, "links")
	os.Mkdir(links, 0o755)
	os.Symlink("/", filepath.Join(links, "root"))
	os.Symlink(filepath.Dir(sock), filepath.Join(links, "engine"))
	os.Symlink(sock, filepath.Join(links, "sock"))
	var tries []string
	for _, p := range []string{links + "/root" + sock, links + "/root/run/docker.sock", links + "/root/var/run/docker.sock",
		links + "/engine/" + filepath.Base(sock), links + "/sock", sock, "/run/docker.sock", "/var/run/docker.sock"} {
		tries = append(tries, "if [ -e "+p+" ]; then echo REACHED "+p+"; else echo unreachable "+p+"; fi")
	}
	command := strings.Join(tries, "; ") + "; grep ^Groups: /proc/self/status; ls " + links + "/root/"
	keys := "  mounts: [/usr, /lib, /lib64, /bin, " + links + "]\n"
	path := filepath.Join(w.specDir, "hostile.yaml")
	os.WriteFile(path, []byte(containSpec(keys, command)), 0o644)
	out := filepath.Join(w.tmp, "run")
	r := testkit.Run(t, chaosBin, w.env, 10*time.Minute, "run", path, "--only", "clean", "--out", out)
	stdouts, _ := filepath.Glob(filepath.Join(out, "trials", "*", "clean", "1", "stdout"))
	if len(stdouts) != 1 {
		t.Fatalf("trial stdout files %v; want one\nexit %d\nstdout:\n%s\nstderr:\n%s", stdouts, r.Code, r.Stdout, r.Stderr)
	}
	got, _ := os.ReadFile(stdouts[0])
	text := string(got)
	t.Logf("inside the container:\n%s", text)
	if strings.Contains(text, "REACHED") || strings.Count(text, "unreachable ") != len(tries) {
		t.Errorf("the engine's socket was reached by path, or not every path was tried:\n%s", text)
	}
	_, groups, ok := strings.Cut(text, "Groups:")
	groups, _, _ = strings.Cut(groups, "\n")
	if !ok {
		t.Fatalf("the agent printed no groups:\n%s", text)
	}
	for _, g := range strings.Fields(groups) {
		if g == "0" || g == strconv.Itoa(gid) {
			t.Errorf("the agent has group %s (the socket's is %d): %q", g, gid, groups)
		}
	}
	if !strings.Contains(text, "\nusr\n") || strings.Contains(text, "\nhome\n") {
		t.Errorf("the link to / does not lead to the container's own root:\n%s", text)
	}
	w.check(t)
}
