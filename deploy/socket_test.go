package deploy_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// needDocker skips without a Docker engine, or fails where CI asks for one.
func needDocker(t *testing.T) {
	t.Helper()
	if err := dockerAvailable(); err != nil {
		if os.Getenv(requireDocker) != "" {
			t.Fatalf("%s is set but no Docker engine answers: %v", requireDocker, err)
		}
		t.Skipf("no Docker engine (%v); CI sets %s to make this a failure", err, requireDocker)
	}
}

// composeCommand is the Compose that validates files here: `docker compose` (v2), else
// docker-compose (v1, Debian's apt package), else none.
func composeCommand() []string {
	if out, err := exec.Command("docker", "compose", "version").CombinedOutput(); err == nil && strings.Contains(string(out), "version") {
		return []string{"docker", "compose"}
	}
	if p, err := exec.LookPath("docker-compose"); err == nil {
		return []string{p}
	}
	return nil
}

// TestComposeConfig: Compose itself reads docker-compose.yml (and the socket override
// docs/deploy.md gives) as valid, and resolves the services the docs describe. The
// structural tests beside it read the YAML; this one asks the tool a user runs.
func TestComposeConfig(t *testing.T) {
	compose := composeCommand()
	if compose == nil {
		if os.Getenv(requireDocker) != "" {
			t.Fatalf("%s is set but neither docker compose nor docker-compose is installed (apt-get install docker-compose)", requireDocker)
		}
		t.Skip("neither docker compose nor docker-compose is installed (apt-get install docker-compose)")
	}
	t.Run("no password", func(t *testing.T) {
		cmd := exec.Command(compose[0], append(append([]string{}, compose[1:]...), "config")...)
		cmd.Dir = ".."
		var env []string
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "CHAOS_DB_PASSWORD=") {
				env = append(env, kv)
			}
		}
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "set CHAOS_DB_PASSWORD in the environment or in .env") {
			t.Errorf("compose config without CHAOS_DB_PASSWORD: %v, want a refusal that names it\n%s", err, out)
		}
	})
	for _, files := range [][]string{
		{"docker-compose.yml"},
		{"docker-compose.yml", "deploy/docker-compose.agents.yml"},
	} {
		t.Run(strings.Join(files, "+"), func(t *testing.T) {
			args := append([]string{}, compose[1:]...)
			for _, f := range files {
				args = append(args, "-f", f)
			}
			cmd := exec.Command(compose[0], append(args, "config")...)
			cmd.Dir = ".."
			cmd.Env = append(os.Environ(), "CHAOS_WORK=/var/lib/chaos-work", "CHAOS_DB_PASSWORD=pw-from-the-environment")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s config: %v\n%s", strings.Join(compose, " "), err, out)
			}
			for _, want := range []string{"127.0.0.1:5432:5432", "127.0.0.1:7233:7233", "127.0.0.1:8080:8080", "PGPASSWORD: pw-from-the-environment"} {
				if !strings.Contains(string(out), want) {
					t.Errorf("the resolved file has no %q\n%s", want, out)
				}
			}
			for _, s := range []string{"postgres:", "temporal:", "temporal-ui:", "chaos-worker:"} {
				if !strings.Contains(string(out), "  "+s) {
					t.Errorf("the resolved file has no service %s\n%s", s, out)
				}
			}
			if len(files) == 2 {
				for _, want := range []string{"/var/run/docker.sock", "/var/lib/chaos-work/bin/chaos", "TMPDIR: /var/lib/chaos-work"} {
					if !strings.Contains(string(out), want) {
						t.Errorf("the override does not give the worker %q\n%s", want, out)
					}
				}
			}
		})
	}
}

// TestWorkerContainerStartsAgents is docs/deploy.md's "the host's engine through its
// socket", done: the worker image FROM scratch (deploy/Dockerfile, the static chaos
// binary) runs `chaos run` (the embedded Temporal server and a worker, in one process)
// with --network none and the host's Docker socket mounted; the spec's agents have
// agent.runtime: docker, so the worker starts each agent's container through the socket,
// itself with --network none. The work folder is the same path inside the worker's
// container and on the host, which is what lets the engine mount the sandbox, the hub's
// sockets, the relay and the chaos binary the worker names. The reference agents must
// give their true verdicts (blind: clean correct, phantom_success silent_wrong;
// verifying, which reads its writes back and writes again: correct on both), and no container of the
// run may be left.
func TestWorkerContainerStartsAgents(t *testing.T) {
	if testing.Short() {
		t.Skip("builds chaos and an image, and runs a chaos run in a container")
	}
	needDocker(t)
	work := t.TempDir()
	rootfs := filepath.Join(work, "rootfs")
	build := exec.Command("sh", "deploy/build-rootfs.sh", rootfs)
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build-rootfs.sh: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(rootfs, "bin", "sh")); err != nil {
		t.Fatalf("the image has no sh (install busybox-static): its agents cannot start")
	}
	tag := fmt.Sprintf("chaos-worker-socket-test:%d", os.Getpid())
	dockerfile, _ := filepath.Abs("Dockerfile")
	if out, err := docker(t, "build", "-f", dockerfile, "-t", tag, work); err != nil {
		t.Fatalf("docker build -f deploy/Dockerfile: %v\n%s", err, out)
	}
	t.Cleanup(func() { docker(t, "rmi", "-f", tag) })

	// The example, its agents in containers of the same image: its sh (busybox) runs the
	// command, {chaos} is the worker's binary the engine mounts.
	b, err := os.ReadFile("../examples/support-ticket.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// The command first checks that it runs in an agent's container (the relay mounted,
	// no Docker socket, which the worker's container has): an agent started anywhere else
	// ends at once and its trials lose their true verdicts.
	text := strings.Replace(string(b), "agent:\n", "agent:\n  runtime: docker\n  image: "+tag+"\n", 1)
	text = strings.Replace(text, `command: "{chaos} agent scripted`, `command: "[ -e /chaos/relay ] && [ ! -e /var/run/docker.sock ] && {chaos} agent scripted`, 1)
	if strings.Count(text, "/chaos/relay") != 1 || !strings.Contains(text, "runtime: docker") {
		t.Fatalf("the example did not change as expected:\n%s", text)
	}
	specPath := filepath.Join(work, "spec.yaml")
	if err := os.WriteFile(specPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"tmp", "data"} {
		if err := os.MkdirAll(filepath.Join(work, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(work, "out")
	run, err := docker(t, "run", "--rm", "--network", "none",
		"-v", "/var/run/docker.sock:/var/run/docker.sock",
		"-v", work+":"+work,
		"-e", "TMPDIR="+filepath.Join(work, "tmp"), "-e", "HOME="+filepath.Join(work, "data"), "-e", "XDG_DATA_HOME="+filepath.Join(work, "data"),
		"--entrypoint", filepath.Join(rootfs, "bin", "chaos"),
		tag, "run", specPath, "--out", out, "--only", "clean,phantom_success@update_ticket")
	if err != nil {
		t.Fatalf("chaos run in the worker container: %v\n%s", err, run)
	}
	var trials []struct {
		Cell, Condition, Verdict string
		ExitCode                 int `json:"exit_code"`
	}
	raw, err := os.ReadFile(filepath.Join(out, "verdicts.json"))
	if err != nil {
		t.Fatalf("no verdicts.json: %v\n%s", err, run)
	}
	if err := json.Unmarshal(raw, &trials); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"agent=blind/clean": "correct", "agent=blind/phantom_success@update_ticket": "silent_wrong",
		"agent=verifying/clean": "correct", "agent=verifying/phantom_success@update_ticket": "correct",
	}
	got := map[string]string{}
	for _, tr := range trials {
		got[tr.Cell+"/"+tr.Condition] = tr.Verdict
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q (all: %v)\n%s", k, got[k], v, got, run)
		}
	}
	var manifest struct {
		RunID string `json:"run_id"`
	}
	if raw, err := os.ReadFile(filepath.Join(out, "manifest.json")); err == nil {
		json.Unmarshal(raw, &manifest)
	}
	if manifest.RunID == "" {
		t.Fatalf("no run id in %s/manifest.json", out)
	}
	left, err := docker(t, "ps", "-a", "-q", "--filter", "label=io.crashwall.chaos.run="+manifest.RunID)
	if err != nil || strings.TrimSpace(left) != "" {
		t.Errorf("containers of run %s left: %q %v", manifest.RunID, left, err)
	}
}
