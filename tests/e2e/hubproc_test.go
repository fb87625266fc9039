package e2e

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/proxies/httpwall"
	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/proxies/stdio"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
)

// hubProcessEnv, set to the chaos binary's path, makes this test binary a hub process
// (serveHubProcess) instead of running tests: a trial's hub lives in the worker, a process
// of its own, never in the agent's, and the benchmarks measure it so.
const hubProcessEnv = "CHAOS_E2E_HUB_PROCESS"

// serveHubProcess serves the example's clean hub as the worker's StartHub does (HTTP, and
// the stream the relay connects to, recording to a file under dir), prints the relay's
// {wall} line and the hub's URL on stdout, and serves until its stdin ends.
func serveHubProcess(bin, dir string) error {
	s, err := spec.Load(exampleSpec)
	if err != nil {
		return err
	}
	conds, err := faults.Generate(s)
	if err != nil {
		return err
	}
	clean, _ := faults.Find(conds, faults.CleanID)
	rec, err := record.Open(filepath.Join(dir, "record.jsonl"))
	if err != nil {
		return err
	}
	h, err := hub.NewHub(hub.Config{Spec: s, Condition: clean, Seed: s.Seed, Trial: "bench", Record: rec})
	if err != nil {
		return err
	}
	defer h.Close("bench over")
	srv, err := httpwall.Serve(h, "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer srv.Close()
	wall, err := stdio.OpenStdioWall(srv, bin, dir)
	if err != nil || wall.Stream == nil {
		return fmt.Errorf("{wall} is not the relay (%v): %s", err, wall.Command)
	}
	defer wall.Close()
	fmt.Printf("%s\n%s\n", wall.Command, srv.URL)
	io.Copy(io.Discard, os.Stdin)
	return nil
}

// startHubProcess starts this test binary as a hub process and returns the relay's {wall}
// line and the hub's URL; the process ends with the benchmark.
func startHubProcess(b *testing.B) (wallCommand, url string) {
	b.Helper()
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), hubProcessEnv+"="+chaosBin, "TMPDIR="+b.TempDir())
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	lines := bufio.NewReader(stdout)
	wallCommand, err = lines.ReadString('\n')
	if err == nil {
		url, err = lines.ReadString('\n')
	}
	if err != nil {
		b.Fatalf("the hub process did not say where it serves: %v", err)
	}
	return strings.TrimSpace(wallCommand), strings.TrimSpace(url)
}
