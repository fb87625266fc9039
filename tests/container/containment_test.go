package container

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/tests/testkit"
)

var standinLine = regexp.MustCompile(`(?ms)^stand-in model: (http://\S+)$.*^ready; Ctrl-C stops$`)

// startStandin runs the stand-in model with the support-ticket script and returns its URL.
func startStandin(t testing.TB) string {
	t.Helper()
	return startStandinScript(t, filepath.Join(repoRoot, "proxies", "llm", "testdata", "support-ticket.script.yaml"))
}

// startStandinScript starts the stand-in model playing script and returns its URL.
func startStandinScript(t testing.TB, script string) string {
	t.Helper()
	p := testkit.Start(t, chaosBin, nil, "model", "standin", "--script", script, "--listen", "127.0.0.1:0")
	return p.WaitStdout(t, standinLine, time.Minute)[1]
}

// probeSpec is the support-ticket world with the probe as its agent, in a container.
const probeSpec = `name: containment
task: Try every way out, then the wall and the model.
agent:
%s  command: node probe.mjs {wall_url} {llm_url} %d %d %s
  timeout: 90s
model:
  upstream: %s/v1
tools:
  - name: read_email
    description: Returns the customer's latest email about ticket T-4821 as JSON.
    effect: none
    reply: '{"ticket": "T-4821", "body": "route to payments"}'
  - name: update_ticket
    description: Sets one field of ticket T-4821.
    effect: write
    input_schema:
      type: object
      properties: {field: {type: string}, value: {type: string}}
      required: [field, value]
    reply: '{"status": "updated"}'
workspace:
  files: [probe.mjs]
state_checks:
  - {key: priority, equals: urgent}
`

// TestContainment runs an agent in a container that tries (a) an HTTP server on the
// host's loopback, (b) files outside its sandbox, (c) the Docker socket and (d) other
// addresses (a loopback alias the host listens on, addresses off the host, a DNS name):
// every attempt fails, each with the error that says why; and the wall ({wall_url}) and
// the model proxy ({llm_url}, before the stand-in model) answer from the same container.
func TestContainment(t *testing.T) {
	dk := needDocker(t)
	testkit.Node(t)
	// (a) an HTTP server on the host's loopback, which a process agent reaches.
	reached := make(chan string, 10)
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached <- r.URL.Path }))
	t.Cleanup(host.Close)
	_, hostPort, _ := net.SplitHostPort(strings.TrimPrefix(host.URL, "http://"))
	// (d) a listener on a loopback alias (host side only: nothing is sent to it from here).
	alias, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatalf("listen on the loopback alias 127.0.0.2: %v", err)
	}
	t.Cleanup(func() { alias.Close() })
	accepted := make(chan struct{}, 10)
	go func() {
		for {
			c, err := alias.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	// (b) a canary outside the sandbox, readable by every user of the host.
	canaryDir, err := os.MkdirTemp("", "chaos-canary-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(canaryDir) })
	os.Chmod(canaryDir, 0o755)
	canary := filepath.Join(canaryDir, "secret.txt")
	if err := os.WriteFile(canary, []byte("the host's secret"), 0o644); err != nil {
		t.Fatal(err)
	}

	standin := startStandin(t)
	dir := t.TempDir()
	probe, err := os.ReadFile(filepath.Join("testdata", "probe.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "probe.mjs"), probe, 0o644)
	specPath := filepath.Join(dir, "containment.yaml")
	text := fmt.Sprintf(probeSpec, dockerAgent(), mustAtoi(t, hostPort), alias.Addr().(*net.TCPAddr).Port, canary, standin)
	os.WriteFile(specPath, []byte(text), 0o644)

	out := filepath.Join(t.TempDir(), "out")
	r := testkit.Run(t, chaosBin, testkit.Env(t), runTimeout, "run", specPath, "--only", "clean", "--data-dir", t.TempDir(), "--out", out)
	stdouts, _ := filepath.Glob(filepath.Join(out, "trials", "*", "*", "*", "stdout"))
	if len(stdouts) != 1 {
		t.Fatalf("want one trial's stdout, found %v\nchaos run (exit %d):\n%s\n%s", stdouts, r.Code, r.Stdout, r.Stderr)
	}
	b, _ := os.ReadFile(stdouts[0])
	stderr, _ := os.ReadFile(filepath.Join(filepath.Dir(stdouts[0]), "stderr"))
	_, line, ok := strings.Cut(string(b), "PROBE ")
	if !ok {
		t.Fatalf("the probe printed no results\nstdout:\n%s\nstderr:\n%s\nchaos run (exit %d):\n%s\n%s", b, stderr, r.Code, r.Stdout, r.Stderr)
	}
	line, _, _ = strings.Cut(line, "\n")
	var got map[string]struct {
		OK     bool   `json:"ok"`
		Code   string `json:"code"`
		Detail string `json:"detail"`
	}
	if err := json.Unmarshal([]byte(line), &got); err != nil {
		t.Fatalf("the probe's results: %v\n%s", err, line)
	}
	t.Logf("inside: %s", got["whoami"].Detail)
	if w := got["whoami"]; !w.OK || !strings.Contains(w.Detail, "pid1 /chaos/relay serve") || strings.Contains(w.Detail, "uid 0 ") {
		t.Errorf("the probe did not run in the agent's container as a user other than root: %+v", w)
	}

	// Every way out fails, with the error that says why.
	for _, c := range []struct {
		name, what string
		codes      []string
	}{
		{"host_loopback_http", "(a) the host's loopback HTTP server 127.0.0.1:" + hostPort + " (the container's loopback is its own)", []string{"ECONNREFUSED"}},
		{"host_file_read", "(b) the host file " + canary + " (not in the container)", []string{"ENOENT"}},
		{"write_root", "(b) writing /escaped (read-only root)", []string{"EROFS"}},
		{"write_usr", "(b) writing /usr/escaped (the host's /usr, mounted read-only)", []string{"EROFS"}},
		{"read_host_passwd_shadow", "(b) the host's /etc/shadow (not mounted)", []string{"ENOENT"}},
		{"docker_socket", "(c) the Docker socket /var/run/docker.sock (not mounted)", []string{"ENOENT"}},
		{"docker_socket_run", "(c) the Docker socket /run/docker.sock (not mounted)", []string{"ENOENT"}},
		{"loopback_alias", "(d) the host's listener on the loopback alias 127.0.0.2", []string{"ECONNREFUSED"}},
		{"private_address", "(d) 10.255.255.1:80 (no network)", []string{"ENETUNREACH"}},
		{"public_address", "(d) 1.1.1.1:443 (no network)", []string{"ENETUNREACH"}},
		{"public_ipv6", "(d) [2606:4700:4700::1111]:443 (no network)", []string{"ENETUNREACH", "EADDRNOTAVAIL"}},
		{"dns", "(d) a DNS name, example.com (no resolver to reach)", []string{"ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED"}},
	} {
		a, ok := got[c.name]
		switch {
		case !ok:
			t.Errorf("%s: not tried", c.what)
		case a.OK:
			t.Errorf("%s: SUCCEEDED from inside the container (%s)", c.what, a.Detail)
		case !slices.Contains(c.codes, a.Code):
			t.Errorf("%s: failed with %s (%s), want %s", c.what, a.Code, a.Detail, strings.Join(c.codes, " or "))
		default:
			t.Logf("%s: failed, %s (%s)", c.what, a.Code, a.Detail)
		}
	}
	select {
	case p := <-reached:
		t.Errorf("the host's loopback server was reached from the container (%s)", p)
	default:
	}
	select {
	case <-accepted:
		t.Errorf("the listener on 127.0.0.2 was reached from the container")
	default:
	}
	// The ways given work from the same container.
	if w := got["wall"]; !w.OK || !strings.Contains(w.Detail, "T-4821") {
		t.Errorf("{wall_url}/tools/read_email from the container: %+v", w)
	} else {
		t.Logf("{wall_url} answered: %s", w.Detail)
	}
	if l := got["llm"]; !l.OK || !strings.Contains(l.Detail, "chat.completion") {
		t.Errorf("{llm_url}/chat/completions from the container: %+v", l)
	} else {
		t.Logf("{llm_url} answered: %.120s", l.Detail)
	}
	// The record holds the wall's call and the model's, as the hub saw them.
	rec, _ := os.ReadFile(filepath.Join(filepath.Dir(stdouts[0]), "record.jsonl"))
	if !strings.Contains(string(rec), `"read_email"`) || !strings.Contains(string(rec), "chat/completions") {
		t.Errorf("the record lacks the wall's or the model's call:\n%.2000s", rec)
	}
	if left := agentContainers(t, dk, runID(t, out)); len(left) > 0 {
		t.Errorf("containers left after the run: %v", left)
	}
}

func mustAtoi(t testing.TB, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}
