package upstream_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/tests/testkit"
)

// headerFront is a reverse proxy in front of a server-everything that counts the
// requests carrying "Authorization: Bearer <header>", the header a spec gives as a
// ${VAR}, once expanded: all of them, the GETs (event streams) and POSTs (messages)
// among them, and apart the requests without it.
type headerFront struct {
	*httptest.Server
	with, gets, posts, bare atomic.Int64
}

// startHeaderFront puts a headerFront before the server at upstream (only its scheme
// and host count); it is closed when the test ends.
func startHeaderFront(t *testing.T, upstream, header string) *headerFront {
	t.Helper()
	target, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	f := &headerFront{}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+header {
			f.bare.Add(1)
		} else {
			f.with.Add(1)
			switch r.Method {
			case http.MethodGet:
				f.gets.Add(1)
			case http.MethodPost:
				f.posts.Add(1)
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

// configWant is a text a command check wants in CHAOS_MCP_CONFIG (a grep pattern), and
// the problem it reports without it.
type configWant struct{ pattern, problem string }

// writeConfigCheck writes an executable command check that reads the servers the way
// the agent would, from CHAOS_MCP_CONFIG (which names them and keeps the references,
// not the values), and reports a problem for each text it lacks.
func writeConfigCheck(t *testing.T, dir string, wants ...configWant) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("#!/bin/sh\nproblems=\"\"\n")
	for _, w := range wants {
		fmt.Fprintf(&b, "echo \"$CHAOS_MCP_CONFIG\" | grep -q %s || problems=\"$problems %s;\"\n", shellQuote(w.pattern), w.problem)
	}
	b.WriteString(`echo "{\"problems\": [${problems:+\"$problems\"}]}"` + "\n")
	p := writeFile(t, dir, "check.sh", b.String())
	if err := os.Chmod(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// commandCheckPassed fails the test unless the trial's second check, the command check
// of writeConfigCheck, ran and passed.
func commandCheckPassed(t *testing.T, k string, r run.TrialResult) {
	t.Helper()
	if len(r.Checks) < 2 || !r.Checks[1].OK || !strings.HasPrefix(r.Checks[1].Check, "command ") {
		t.Errorf("%s: the command check did not pass: %+v", k, r.Checks)
	}
}

// watchProcessList scans every process's command line for the secrets every 20ms until
// the function it returns is called, which fails the test if a secret was seen there or
// the list was scanned fewer than 5 times. The scans also stop when the test ends.
func watchProcessList(t *testing.T, secrets ...string) (stop func()) {
	t.Helper()
	done := make(chan struct{})
	var mu sync.Mutex
	var seenInCmdline []string
	var scans atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
			cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
			for _, p := range cmdlines {
				b, err := os.ReadFile(p)
				if err != nil {
					continue
				}
				for _, s := range secrets {
					if bytes.Contains(b, []byte(s)) {
						mu.Lock()
						seenInCmdline = append(seenInCmdline, p+": "+strings.ReplaceAll(string(b), "\x00", " "))
						mu.Unlock()
					}
				}
			}
			scans.Add(1)
		}
	})
	halt := sync.OnceFunc(func() {
		close(done)
		wg.Wait()
	})
	t.Cleanup(halt)
	return func() {
		t.Helper()
		halt()
		if scans.Load() < 5 {
			t.Errorf("the process list was scanned only %d times", scans.Load())
		}
		mu.Lock()
		defer mu.Unlock()
		for _, s := range seenInCmdline {
			t.Errorf("a secret is in the process list: %s", s)
		}
	}
}

// noSecrets fails the test if a secret is in any of outputs (by what they are) or in any
// file under dir: the test's folder holds the run folder, the data directory (Temporal's
// history, the logs) and the temporary folder (sandboxes). Fewer than 10 files there
// fails it too.
func noSecrets(t *testing.T, dir string, outputs map[string]string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		for name, text := range outputs {
			if strings.Contains(text, s) {
				t.Errorf("%s holds a secret", name)
			}
		}
	}
	files := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		files++
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds a secret", p)
			}
		}
		return nil
	})
	if files < 10 {
		t.Errorf("only %d files searched", files)
	}
}

// TestSecretsStayOut gives a remote server a header from the environment and a stdio
// server an environment token, runs trials against both, and searches every file the run
// wrote, the process list during the run and all output for the two values.
func TestSecretsStayOut(t *testing.T) {
	t.Parallel()
	header, token := testkit.RandomSecret("hdr-"), testkit.RandomSecret("tok-")
	// A front for server-everything that notes whether the header arrived expanded.
	front := startHeaderFront(t, startEverything(t), header)

	env, tmp := testEnv(t, "UPSTREAM_TEST_HEADER="+header, "UPSTREAM_TEST_TOKEN="+token)
	script := writeFile(t, tmp, "script.yaml", `sources:
  - {tool: echo, args: {message: hello}}
writes:
  - name: the entity
    tool: create_entities
    args: {entities: [{name: Alice, entityType: person, observations: [likes tea]}]}
    check: {tool: open_nodes, args: {names: [Alice]}, path: "$.entities[0].name", equals: Alice}
`)
	sv := memoryServer(t)
	checker := writeConfigCheck(t, tmp,
		configWant{`"memory":{"type":"stdio"`, "no memory server"},
		configWant{`Bearer ${UPSTREAM_TEST_HEADER}`, "no header reference"})
	specPath := writeFile(t, tmp, "secrets.yaml", fmt.Sprintf(`name: secrets
task: Remember Alice.
agent:
  command: "{chaos} agent scripted --style verifying --transport stdio --wall-command {wall} --script %s"
  profile: scripted
  timeout: 10m
servers:
  - name: memory
    command: %s
    args: [%s]
    env: {MEMORY_FILE_PATH: "{sandbox}/memory.jsonl", API_TOKEN: "${UPSTREAM_TEST_TOKEN}"}
  - name: everything
    url: %s/mcp?key=${UPSTREAM_TEST_TOKEN}
    headers: {Authorization: "Bearer ${UPSTREAM_TEST_HEADER}"}
probes:
  - mcp: {server: memory, tool: open_nodes, args: {names: [Alice]}, path: "$.entities[0].name", equals: Alice}
  - command: %s
`, script, yamlQuote(sv.Command), yamlQuote(sv.Args[0]), front.URL, yamlQuote(checker)))

	// Watch the process list while the run goes on.
	stopWatching := watchProcessList(t, header, token)
	out := filepath.Join(tmp, "run")
	res := runChaos(t, env, 15*time.Minute, "run", specPath, "--out", out, "--only", "clean,phantom_success@create_entities,transient_error@echo")
	faultsOut := runChaos(t, env, time.Minute, "faults", specPath)
	stopWatching()
	if res.code != 0 || faultsOut.code != 0 {
		t.Fatalf("chaos run exited %d, chaos faults %d\nstdout:\n%s\nstderr:\n%s\n%s", res.code, faultsOut.code, res.stdout, res.stderr, faultsOut.stderr)
	}
	if front.with.Load() == 0 || front.bare.Load() != 0 {
		t.Errorf("server-everything got the header with the secret filled in %d times (want some), and %d requests without it", front.with.Load(), front.bare.Load())
	}
	got := trialResults(t, out)
	if len(got) != 3 {
		t.Errorf("%d trials, want 3", len(got))
	}
	for k, r := range got {
		if r.Verdict == "no_verdict" {
			t.Errorf("%s: no verdict: %s", k, r.VerdictWhy)
		}
		commandCheckPassed(t, k, r)
	}
	noSecrets(t, tmp, map[string]string{"chaos run stdout": res.stdout, "chaos run stderr": res.stderr, "chaos faults output": faultsOut.stdout + faultsOut.stderr}, header, token)
}
