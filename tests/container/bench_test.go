package container

import (
	"context"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/container"
	"github.com/crashwall/chaos/proxies/stdio"
	"github.com/crashwall/chaos/tests/testkit"
)

// benchSpec is a one-tool world for the benchmarks' agents.
const benchSpec = `name: bench
task: Call the wall.
agent:
%s  command: %s
  timeout: 5m
tools:
  - name: read_email
    description: Returns the email.
    effect: none
    reply: '{"ticket": "T-4821", "body": "route to payments"}'
  - name: update_ticket
    description: Sets one field.
    effect: write
    input_schema:
      type: object
      properties: {field: {type: string}, value: {type: string}}
      required: [field, value]
workspace:
  files: [calls.mjs]
state_checks:
  - {key: priority, equals: urgent}
`

// benchRun runs the bench spec with the agent command and runtime lines (process: "")
// and returns its trials' results.
func benchRun(b *testing.B, env []string, runtime, command string, extra ...string) map[string]runResult {
	b.Helper()
	dir := b.TempDir()
	calls, err := os.ReadFile(filepath.Join("testdata", "calls.mjs"))
	if err != nil {
		b.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "calls.mjs"), calls, 0o644)
	specPath := filepath.Join(dir, "bench.yaml")
	os.WriteFile(specPath, []byte(fmt.Sprintf(benchSpec, runtime, command)), 0o644)
	out := filepath.Join(dir, "out")
	r := testkit.Run(b, chaosBin, env, 2*runTimeout, append([]string{"run", specPath, "--only", "clean", "--data-dir", b.TempDir(), "--out", out}, extra...)...)
	var v []runResult
	if _, err := os.Stat(filepath.Join(out, "verdicts.json")); err != nil {
		b.Fatalf("chaos run: exit %d, no verdicts.json\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	testkit.ReadJSON(b, filepath.Join(out, "verdicts.json"), &v)
	m := map[string]runResult{}
	for _, t := range v {
		t.stdout, _ = os.ReadFile(filepath.Join(t.Dir, "stdout"))
		m[t.ID] = t
	}
	return m
}

type runResult struct {
	ID       string        `json:"id"`
	Dir      string        `json:"dir"`
	Outcome  string        `json:"outcome"`
	Duration time.Duration `json:"duration"`
	ExitCode int           `json:"exit_code"`
	stdout   []byte
}

// BenchmarkAgentStart is the start-up a container adds to a trial: an agent that does
// nothing (`true`), 6 trials as processes and 6 in containers, interleaved run by run in
// the same benchmark. A trial's agent duration runs from RunAgent's start to the agent's
// end and the removal of what it left (its process group, or its container).
func BenchmarkAgentStart(b *testing.B) {
	needDocker(b)
	env := testkit.Env(b)
	var proc, dock []time.Duration
	for i := 0; i < b.N; i++ {
		for _, rt := range []string{"", dockerAgent()} {
			for _, t := range benchRun(b, env, rt, "true", "--reps", "6", "--concurrency", "1") {
				if t.ExitCode != 0 {
					b.Fatalf("%s: the agent exited %d", t.ID, t.ExitCode)
				}
				if rt == "" {
					proc = append(proc, t.Duration)
				} else {
					dock = append(dock, t.Duration)
				}
			}
		}
	}
	p, d := median(proc), median(dock)
	b.ReportMetric(float64(p.Milliseconds()), "process-ms/trial")
	b.ReportMetric(float64(d.Milliseconds()), "docker-ms/trial")
	b.ReportMetric(float64((d - p).Milliseconds()), "added-ms/trial")
	b.ReportMetric(float64(d)/float64(p), "docker/process")
	b.Logf("agent start to end (median of %d and %d trials): process %s, docker %s, added %s", len(proc), len(dock), p, d, d-p)
}

// BenchmarkRelayCall is the latency the container's relay adds to a tool call: the same
// node agent times 200 calls, one at a time, as a process on the host (REST straight to
// the hub's TCP port; MCP over the stdio wall, the relay on the hub's stream socket) and
// in a container (REST through chaos-relay serve on the container's loopback; the stdio
// wall, the same relay through the mounted socket).
func BenchmarkRelayCall(b *testing.B) {
	needDocker(b)
	testkit.Node(b) // calls.mjs runs on the host's node, in both arms
	env := testkit.Env(b)
	type callStats struct{ N, P50, P95 float64 }
	var got = map[string][]map[string]callStats{}
	for i := 0; i < b.N; i++ {
		for _, arm := range []struct{ name, runtime string }{{"process", ""}, {"docker", dockerAgent()}} {
			for _, t := range benchRun(b, env, arm.runtime, "node calls.mjs {wall_url} {wall} 200", "--reps", "1", "--concurrency", "1") {
				_, line, ok := strings.Cut(string(t.stdout), "CALLS ")
				if !ok {
					b.Fatalf("%s %s: no timings in stdout:\n%s", arm.name, t.ID, t.stdout)
				}
				line, _, _ = strings.Cut(line, "\n")
				var s map[string]callStats
				if err := json.Unmarshal([]byte(line), &s); err != nil {
					b.Fatal(err)
				}
				got[arm.name] = append(got[arm.name], s)
			}
		}
	}
	p50 := func(arm, way string) float64 {
		var v []float64
		for _, s := range got[arm] {
			v = append(v, s[way].P50)
		}
		return medianF(v)
	}
	hostStdio, hostREST := p50("process", "stdio"), p50("process", "rest")
	dockStdio, dockREST := p50("docker", "stdio"), p50("docker", "rest")
	b.ReportMetric(hostStdio, "host-stdio-p50-µs")
	b.ReportMetric(hostREST, "host-rest-p50-µs")
	b.ReportMetric(dockStdio, "container-stdio-p50-µs")
	b.ReportMetric(dockREST, "container-rest-p50-µs")
	// The baseline is the stdio wall on the host, measured in the same run: what the
	// container adds on each way of calling.
	b.ReportMetric(dockREST-hostStdio, "relay-added-µs/call")
	b.ReportMetric(dockStdio-hostStdio, "container-stdio-added-µs/call")
	b.ReportMetric(dockStdio/hostStdio, "container-stdio/host-stdio")
	b.ReportMetric(dockREST/hostStdio, "container-rest/host-stdio")
	b.Logf("p50 per call (median over %d runs of 200 calls an arm): host stdio wall %.0f µs, host REST %.0f µs; container stdio wall %.0f µs (+%.0f µs, %.2fx the host's stdio wall), container REST through the relay %.0f µs (+%.0f µs, %.2fx; %.0f µs over the host's REST)",
		len(got["docker"]), hostStdio, hostREST, dockStdio, dockStdio-hostStdio, dockStdio/hostStdio, dockREST, dockREST-hostStdio, dockREST/hostStdio, dockREST-hostREST)
	b.Logf("all: %v", got)
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration{}, d...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2]
}

func medianF(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64{}, v...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2]
}

// BenchmarkContainerPhases is where a container's part of an agent's start-up goes, step
// by step, with the container the docker runtime makes (container.Client.Start: the same
// limits, the relay as its first process) and an agent that does nothing (`sh -c true`):
// the engine's create, attach and start, the run to the exit (the relay, sh, its end, the
// engine noticing), and the removal; against the same `sh -c true` started as a process
// on the host in the same run. Two arms: "host-mounts" borrows the host's sh and its
// libraries (/usr, /lib, /lib64, /bin, /etc/ssl mounted, as the tests' agents do);
// "static-sh" mounts only the relay, a static busybox as /bin/sh and the sandbox, which
// tells what the host's folders and a dynamic sh cost.
func BenchmarkContainerPhases(b *testing.B) {
	cli := needDocker(b)
	relay := stdio.FindRelay(chaosBin)
	if relay == "" {
		b.Fatalf("no chaos-relay next to %s", chaosBin)
	}
	sandbox := b.TempDir()
	base := []container.Mount{{Source: relay, Target: "/chaos/relay"}, {Source: sandbox, Target: sandbox, Writable: true}}
	hostArm := append([]container.Mount{}, base...)
	for _, m := range hostMounts {
		hostArm = append(hostArm, container.Mount{Source: m, Target: m})
	}
	arms := []struct {
		name   string
		mounts []container.Mount
	}{{"host-mounts", hostArm}}
	if busybox, err := exec.LookPath("busybox"); err == nil && staticELF(busybox) {
		arms = append(arms, struct {
			name   string
			mounts []container.Mount
		}{"static-sh", append(append([]container.Mount{}, base...), container.Mount{Source: busybox, Target: "/bin/sh"})})
	}
	for _, arm := range arms {
		b.Run(arm.name, func(b *testing.B) { containerPhases(b, cli, arm.mounts, sandbox) })
	}
}

func containerPhases(b *testing.B, cli *container.Client, mounts []container.Mount, sandbox string) {
	var create, attach, start, toExit, remove, total, proc []time.Duration
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		k, err := cli.Start(ctx, container.Config{
			Image: imageTag, User: "65534:65534", Pids: 512, Mounts: mounts, WorkDir: sandbox,
			Env: []string{"PATH=/usr/bin:/bin", "HOME=" + sandbox}, Cmd: []string{"/chaos/relay", "serve", "--", "sh", "-c", "true"},
			Labels: map[string]string{container.LabelManaged: "1", container.LabelRun: "bench-phases"},
		}, nopCloser{io.Discard}, nopCloser{io.Discard})
		if err != nil {
			b.Fatal(err)
		}
		started := time.Now()
		if e := <-k.Done(); e.Code != 0 || e.Err != nil {
			b.Fatalf("the container's sh -c true: exit %d %v", e.Code, e.Err)
		}
		exited := time.Now()
		k.WaitOutput(time.Minute)
		if err := k.Remove(ctx); err != nil {
			b.Fatal(err)
		}
		end := time.Now()
		create, attach, start = append(create, k.Timing.Create), append(attach, k.Timing.Attach), append(start, k.Timing.Start)
		toExit, remove, total = append(toExit, exited.Sub(started)), append(remove, end.Sub(exited)), append(total, end.Sub(t0))

		t0 = time.Now()
		if err := exec.Command("sh", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
		proc = append(proc, time.Since(t0))
	}
	ms := func(d []time.Duration) float64 { return float64(median(d).Microseconds()) / 1000 }
	b.ReportMetric(ms(create), "create-ms")
	b.ReportMetric(ms(attach), "attach-ms")
	b.ReportMetric(ms(start), "start-ms")
	b.ReportMetric(ms(toExit), "run-to-exit-ms")
	b.ReportMetric(ms(remove), "remove-ms")
	b.ReportMetric(ms(total), "container-ms")
	b.ReportMetric(ms(proc), "process-ms")
	b.ReportMetric(ms(total)-ms(proc), "added-ms")
	b.Logf("median of %d: create %.0f ms, attach %.0f ms, start %.0f ms, start to exit %.0f ms, remove %.0f ms: container %.0f ms against %.1f ms for the same sh -c true as a process",
		len(total), ms(create), ms(attach), ms(start), ms(toExit), ms(remove), ms(total), ms(proc))
}

// staticELF says the file is an ELF executable that needs no dynamic loader.
func staticELF(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return false
		}
	}
	return true
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
