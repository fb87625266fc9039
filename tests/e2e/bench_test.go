package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/proxies/stdio"
	"github.com/crashwall/chaos/tests/testkit"
)

// The wall's benchmarks (make bench). Each measures a wall and, in the same sub-benchmark,
// the baseline: testdata/bare_mcp.py, a bare MCP stdio server in Python's standard library
// that answers the same tools on a dict. The two are measured interleaved (a call to one,
// then the same call to the other), so a machine that gets busier mid-run slows both.
//
// The walls:
//
//	spec      chaos wall --spec examples/support-ticket.yaml --record FILE (standalone, recording)
//	hub       {wall} as a trial fills it in: the relay (cmd/chaos-relay, built next to chaos)
//	          on the stream of a hub served as the worker serves it, in a process of its own
//	          (this test binary again, hubproc_test.go; recording to a file): the relay hands
//	          the agent's pipes to it, so the calls go straight to that process
//	hub-http  {wall} where there is no relay: chaos wall --hub URL, bridged to the same hub
//	          over HTTP
//
//	go test ./tests/e2e -run '^$' -bench 'WallCall' -benchtime 2000x
//	go test ./tests/e2e -run '^$' -bench 'WallStart' -benchtime 20x

// BenchmarkWallCall is one tools/call over MCP stdio, from the request's write to the
// response's read, as an agent sees it. It reports the wall's p50 and p95 (µs), the
// baseline's, and their ratios (x-py-p50, x-py-p95).
func BenchmarkWallCall(b *testing.B) {
	for _, name := range []string{"spec", "hub", "hub-http"} {
		b.Run(name, func(b *testing.B) {
			py := startStdio(b, pythonServer(b))
			wall := startStdio(b, benchWall(b, name))
			for _, s := range []*stdioPeer{py, wall} {
				s.initialize(b)
				for i := range 50 { // warm up: first calls pay for lazy setup on both sides
					s.callTool(b, i)
				}
			}
			wallTimes := make([]time.Duration, 0, b.N)
			pyTimes := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				wallTimes = append(wallTimes, wall.callTool(b, i))
				pyTimes = append(pyTimes, py.callTool(b, i))
			}
			b.StopTimer()
			reportQuantiles(b, "", wallTimes)
			reportQuantiles(b, "py-", pyTimes)
			b.ReportMetric(ratio(quantile(wallTimes, 0.5), quantile(pyTimes, 0.5)), "x-py-p50")
			b.ReportMetric(ratio(quantile(wallTimes, 0.95), quantile(pyTimes, 0.95)), "x-py-p95")
		})
	}
}

// BenchmarkWallStart is a wall's start: from the process's start to its answer to
// initialize, and then its memory (/proc/PID/smaps_rollup): Pss, and Private_Dirty, the
// pages that are this process's alone. Each iteration starts the baseline and then the
// wall. It reports the wall's start p50 (ms), the baseline's, their ratio (x-py-start), and
// both memories (MB, the largest seen).
func BenchmarkWallStart(b *testing.B) {
	for _, name := range []string{"spec", "hub", "hub-http"} {
		b.Run(name, func(b *testing.B) {
			pyArgv, wallArgv := pythonServer(b), benchWall(b, name)
			var wallStart, pyStart []time.Duration
			var wallMem, pyMem memory
			b.ResetTimer()
			for range b.N {
				for _, c := range []struct {
					argv  []string
					times *[]time.Duration
					mem   *memory
				}{{pyArgv, &pyStart, &pyMem}, {wallArgv, &wallStart, &wallMem}} {
					t0 := time.Now()
					s := startStdio(b, c.argv)
					s.initialize(b)
					*c.times = append(*c.times, time.Since(t0))
					c.mem.max(readMemory(b, s.cmd.Process.Pid))
					s.close(b)
				}
			}
			b.StopTimer()
			p50, py50 := quantile(wallStart, 0.5), quantile(pyStart, 0.5)
			b.ReportMetric(float64(p50.Microseconds())/1e3, "start-ms")
			b.ReportMetric(float64(py50.Microseconds())/1e3, "py-start-ms")
			b.ReportMetric(ratio(p50, py50), "x-py-start")
			b.ReportMetric(wallMem.privateDirty, "private-MB")
			b.ReportMetric(wallMem.pss, "pss-MB")
			b.ReportMetric(pyMem.privateDirty, "py-private-MB")
			b.ReportMetric(pyMem.pss, "py-pss-MB")
		})
	}
}

// pythonServer is the baseline's command line. The interpreter is python3's real
// executable: the python3 on PATH may be a shim (pyenv's is a shell script) that would
// add its own start to the baseline's.
func pythonServer(b *testing.B) []string {
	out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	py := strings.TrimSpace(string(out))
	if err != nil || py == "" {
		b.Fatalf("the baseline needs python3 on PATH: %v", err)
	}
	return []string{py, filepath.Join(repoRoot, "tests", "e2e", "testdata", "bare_mcp.py")}
}

// benchWall is the command line of the named wall. For "hub" it starts a hub process,
// served as the worker's StartHub serves one, and runs {wall} as the agent would: with sh
// -c (exec, so the process measured is the wall itself, not the shell).
func benchWall(b *testing.B, name string) []string {
	b.Helper()
	rec := filepath.Join(b.TempDir(), "record.jsonl")
	switch name {
	case "spec":
		return []string{chaosBin, "wall", "--spec", exampleSpec, "--record", rec}
	case "hub", "hub-http":
		wall, url := startHubProcess(b)
		if name == "hub-http" {
			return []string{"sh", "-c", "exec " + stdio.WallCommand(chaosBin, url)}
		}
		return []string{"sh", "-c", "exec " + wall}
	}
	b.Fatalf("no wall named %q", name)
	return nil
}

// stdioPeer is an MCP server process spoken to a line at a time, as an agent's client
// does, with no SDK in between: what is timed is the server and the pipes.
type stdioPeer struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	id     int
}

func startStdio(b *testing.B, argv []string) *stdioPeer {
	b.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	stdin, stdout := testkit.StartPiped(b, cmd)
	s := &stdioPeer{cmd: cmd, stdin: stdin, stdout: bufio.NewReaderSize(stdout, 64<<10)}
	b.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			s.cmd.Process.Kill()
			s.cmd.Wait()
		}
	})
	return s
}

// request sends one request and reads lines up to its response.
func (s *stdioPeer) request(b *testing.B, method string, params any) json.RawMessage {
	s.id++
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": s.id, "method": method, "params": params})
	if _, err := s.stdin.Write(append(msg, '\n')); err != nil {
		b.Fatalf("%s: write: %v", method, err)
	}
	for {
		line, err := s.stdout.ReadBytes('\n')
		if err != nil {
			b.Fatalf("%s: read: %v", method, err)
		}
		var resp struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(line, &resp); err != nil {
			b.Fatalf("%s: the server wrote %q: %v", method, line, err)
		}
		if string(resp.ID) != strconv.Itoa(s.id) {
			continue // a notification, or a log line
		}
		if resp.Error != nil {
			b.Fatalf("%s: %s", method, resp.Error)
		}
		return resp.Result
	}
}

func (s *stdioPeer) initialize(b *testing.B) {
	s.request(b, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "bench", "version": "0"}})
	if _, err := io.WriteString(s.stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		b.Fatal(err)
	}
}

// callTool makes one update_ticket call (alternating values) and returns its latency.
func (s *stdioPeer) callTool(b *testing.B, i int) time.Duration {
	value := []string{"urgent", "low"}[i%2]
	t0 := time.Now()
	res := s.request(b, "tools/call", map[string]any{"name": "update_ticket", "arguments": map[string]any{"field": "priority", "value": value}})
	d := time.Since(t0)
	if !strings.Contains(string(res), "updated") {
		b.Fatalf("update_ticket answered %s", res)
	}
	return d
}

// close ends the session as a client does (stdin closed) and waits for the exit.
func (s *stdioPeer) close(b *testing.B) {
	s.stdin.Close()
	if err := s.cmd.Wait(); err != nil {
		b.Fatalf("%s exited: %v", s.cmd.Path, err)
	}
}

type memory struct{ pss, privateDirty float64 } // MB

func (m *memory) max(o memory) {
	m.pss, m.privateDirty = max(m.pss, o.pss), max(m.privateDirty, o.privateDirty)
}

// readMemory reads a process's Pss and Private_Dirty from /proc/PID/smaps_rollup.
func readMemory(b *testing.B, pid int) memory {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		b.Fatalf("the benchmark reads memory from /proc (Linux): %v", err)
	}
	var m memory
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "Pss:":
			m.pss = kb / 1024
		case "Private_Dirty:":
			m.privateDirty = kb / 1024
		}
	}
	return m
}

func quantile(ds []time.Duration, q float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1))]
}

func reportQuantiles(b *testing.B, prefix string, ds []time.Duration) {
	b.ReportMetric(float64(quantile(ds, 0.5).Nanoseconds())/1e3, prefix+"p50-µs")
	b.ReportMetric(float64(quantile(ds, 0.95).Nanoseconds())/1e3, prefix+"p95-µs")
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }
