package deploy_test

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/proxies/stdio"
)

// requireDocker is set by CI (.ci/run), which starts a Docker engine: there a missing
// engine fails the image test instead of skipping it.
const requireDocker = "CHAOS_REQUIRE_DOCKER"

// TestWorkerImage builds the image's files with build-rootfs.sh, checks every binary in
// it is static, starts the static chaos's embedded server (pure-Go SQLite), and, where a
// Docker engine runs, builds the image FROM scratch and runs chaos and sh in it.
func TestWorkerImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds chaos and an image")
	}
	ctxDir := t.TempDir()
	rootfs := filepath.Join(ctxDir, "rootfs")
	build := exec.Command("sh", "deploy/build-rootfs.sh", rootfs)
	build.Dir = ".."
	out, err := build.CombinedOutput()
	if err != nil {
		t.Fatalf("build-rootfs.sh: %v\n%s", err, out)
	}
	if len(out) > 0 {
		t.Logf("build-rootfs.sh:\n%s", out)
	}

	t.Run("every binary is static", func(t *testing.T) {
		n := 0
		filepath.WalkDir(rootfs, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			f, err := elf.Open(path)
			if err != nil {
				return nil // not an ELF file
			}
			defer f.Close()
			n++
			for _, p := range f.Progs {
				if p.Type == elf.PT_INTERP {
					t.Errorf("%s asks for a dynamic loader: it cannot run FROM scratch", path)
				}
			}
			if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
				t.Errorf("%s needs shared libraries %v", path, libs)
			}
			return nil
		})
		if n == 0 {
			t.Fatal("no binary in the image")
		}
	})

	t.Run("the relay sits next to chaos", func(t *testing.T) {
		// The worker's trials start it as {wall}; without it they fall back to chaos wall --hub.
		if relay := stdio.FindRelay(filepath.Join(rootfs, "bin", "chaos")); relay == "" {
			t.Errorf("no executable bin/%s in the image", stdio.RelayName)
		}
	})

	t.Run("the static binary runs the embedded server", func(t *testing.T) {
		data := t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(rootfs, "bin", "chaos"), "server", "--data-dir", data, "--port", "0", "--ui-port", "-1", "--no-worker")
		cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+data)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ready := false
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "ready; Ctrl-C stops") {
				ready = true
				break
			}
		}
		cmd.Process.Signal(os.Interrupt)
		go func() {
			for sc.Scan() {
			}
		}()
		err = cmd.Wait()
		if !ready || err != nil {
			t.Fatalf("the static chaos server: ready %v, exit %v\n%s", ready, err, stderr.String())
		}
		if _, err := os.Stat(filepath.Join(data, "temporal.db")); err != nil {
			t.Errorf("no SQLite history: %v", err)
		}
	})

	t.Run("docker build", func(t *testing.T) {
		if err := dockerAvailable(); err != nil {
			if os.Getenv(requireDocker) != "" {
				t.Fatalf("%s is set but no Docker engine answers: %v", requireDocker, err)
			}
			t.Skipf("no Docker engine (%v); CI sets %s to make this a failure", err, requireDocker)
		}
		tag := fmt.Sprintf("chaos-worker-test:%d", os.Getpid())
		dockerfile, _ := filepath.Abs("Dockerfile")
		if out, err := docker(t, "build", "-f", dockerfile, "-t", tag, ctxDir); err != nil {
			t.Fatalf("docker build -f deploy/Dockerfile: %v\n%s", err, out)
		}
		t.Cleanup(func() { docker(t, "rmi", "-f", tag) })
		out, err := docker(t, "image", "inspect", "--format", "{{json .Config.Entrypoint}} {{len .RootFS.Layers}}", tag)
		if err != nil || !strings.Contains(out, `["/bin/chaos"]`) {
			t.Errorf("image inspect: %s %v", out, err)
		}
		if out, err := docker(t, "run", "--rm", "--network", "none", tag, "version"); err != nil || !strings.HasPrefix(out, "chaos ") {
			t.Errorf("chaos version in the image: %q, %v", out, err)
		}
		if _, err := os.Stat(filepath.Join(rootfs, "bin", "sh")); err != nil {
			if os.Getenv(requireDocker) != "" {
				t.Fatalf("the image has no sh (install busybox-static): its worker cannot start agents")
			}
			t.Skip("no static busybox here: the image has no sh")
		}
		if out, err := docker(t, "run", "--rm", "--network", "none", "--entrypoint", "/bin/sh", tag, "-c", "echo agents start; ls /tmp /runs /data"); err != nil || !strings.Contains(out, "agents start") {
			t.Errorf("sh in the image: %q, %v", out, err)
		}
	})
}

func dockerAvailable() error {
	if _, err := exec.LookPath("docker"); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", "version", "--format", "{{.Server.Version}}").CombinedOutput()
	if err != nil {
		return fmt.Errorf("docker version: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

func docker(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
	return string(out), err
}
