package upstream_test

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
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
)

func randomSecret(prefix string) string {
	b := make([]byte, 12)
	rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// TestSecretsStayOut gives a remote server a header from the environment and a stdio
// server an environment token, runs trials against both, and searches every file the run
// wrote, the process list during the run and all output for the two values.
func TestSecretsStayOut(t *testing.T) {
	t.Parallel()
	header, token := randomSecret("hdr-"), randomSecret("tok-")
	everything := startEverything(t)
	// A front for server-everything that notes whether the header arrived expanded.
	target, _ := url.Parse(everything)
	var sawHeader atomic.Int64
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer "+header {
			sawHeader.Add(1)
		}
		rp.ServeHTTP(w, r)
	}))
	defer front.Close()

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
	// A command check reads the servers the way the agent would: from CHAOS_MCP_CONFIG,
	// which names them and keeps the references, not the values.
	checker := writeFile(t, tmp, "check.sh", `#!/bin/sh
problems=""
echo "$CHAOS_MCP_CONFIG" | grep -q '"memory":{"type":"stdio"' || problems="$problems no memory server;"
echo "$CHAOS_MCP_CONFIG" | grep -q 'Bearer ${UPSTREAM_TEST_HEADER}' || problems="$problems no header reference;"
echo "{\"problems\": [${problems:+\"$problems\"}]}"
`)
	if err := os.Chmod(checker, 0o755); err != nil {
		t.Fatal(err)
	}
	specPath := writeFile(t, tmp, "secrets.yaml", fmt.Sprintf(`name: secrets
task: Remember Alice.
agent:
  command: "{chaos} agent scripted --style verifying --transport stdio --wall-command {wall} --script %s"
  profile: scripted
  timeout: 60s
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
	stop := make(chan struct{})
	var mu sync.Mutex
	var seenInCmdline []string
	var scans atomic.Int64
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
			for _, p := range cmdlines {
				b, err := os.ReadFile(p)
				if err != nil {
					continue
				}
				for _, s := range []string{header, token} {
					if bytes.Contains(b, []byte(s)) {
						mu.Lock()
						seenInCmdline = append(seenInCmdline, p+": "+strings.ReplaceAll(string(b), "\x00", " "))
						mu.Unlock()
					}
				}
			}
			scans.Add(1)
		}
	}()
	out := filepath.Join(tmp, "run")
	res := runChaos(t, env, 4*time.Minute, "run", specPath, "--out", out, "--only", "clean,phantom_success@create_entities,transient_error@echo")
	faultsOut := runChaos(t, env, time.Minute, "faults", specPath)
	close(stop)
	if res.code != 0 || faultsOut.code != 0 {
		t.Fatalf("chaos run exited %d, chaos faults %d\nstdout:\n%s\nstderr:\n%s\n%s", res.code, faultsOut.code, res.stdout, res.stderr, faultsOut.stderr)
	}
	if sawHeader.Load() == 0 {
		t.Error("server-everything never got the header with the secret filled in")
	}
	got := trialResults(t, out)
	if len(got) != 3 {
		t.Errorf("%d trials, want 3", len(got))
	}
	for k, r := range got {
		if r.Verdict == "no_verdict" {
			t.Errorf("%s: no verdict: %s", k, r.VerdictWhy)
		}
		if len(r.Checks) < 2 || !r.Checks[1].OK || !strings.HasPrefix(r.Checks[1].Check, "command ") {
			t.Errorf("%s: the command check did not pass: %+v", k, r.Checks)
		}
	}
	if scans.Load() < 5 {
		t.Errorf("the process list was scanned only %d times", scans.Load())
	}
	mu.Lock()
	for _, s := range seenInCmdline {
		t.Errorf("a secret is in the process list: %s", s)
	}
	mu.Unlock()
	for _, s := range []string{header, token} {
		for name, text := range map[string]string{"chaos run stdout": res.stdout, "chaos run stderr": res.stderr, "chaos faults output": faultsOut.stdout + faultsOut.stderr} {
			if strings.Contains(text, s) {
				t.Errorf("%s holds a secret", name)
			}
		}
	}
	// Every file the run wrote: the run folder, the data directory (Temporal's history,
	// the logs), the temporary folder (sandboxes).
	files := 0
	filepath.WalkDir(tmp, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		files++
		for _, s := range []string{header, token} {
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
