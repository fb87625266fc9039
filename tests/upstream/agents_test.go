package upstream_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/agents"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/spec"
)

// memoryScript is a reference agent's task against server-memory: create Alice, and
// (verifying) read her back with open_nodes.
const memoryScript = `writes:
  - name: the entity
    tool: create_entities
    args: {entities: [{name: Alice, entityType: person, observations: [likes tea]}]}
    check: {tool: open_nodes, args: {names: [Alice]}, path: "$.entities[0].name", equals: Alice}
`

// memoryRunSpec is a spec with server-memory behind the wall, the reference agents as
// two arms, and an mcp probe that reads Alice back from the real server.
func memoryRunSpec(t *testing.T, dir string) string {
	script := writeFile(t, dir, "script.yaml", memoryScript)
	sv := memoryServer(t)
	return writeFile(t, dir, "memory.yaml", fmt.Sprintf(`name: memory
task: Remember that Alice is a person who likes tea.
agent:
  command: "{chaos} agent scripted --style {agent} --transport stdio --wall-command {wall} --script %s"
  profile: scripted
  timeout: 10m
axes:
  agent: [blind, verifying]
servers:
  - name: memory
    command: %s
    args: [%s]
    env: {MEMORY_FILE_PATH: "{sandbox}/memory.jsonl"}
probes:
  - mcp: {server: memory, tool: open_nodes, args: {names: [Alice]}, path: "$.entities[0].name", equals: Alice}
claim:
  status_field: "(?im)^\\W*STATUS:\\s*(ok|partial|failed)"
`, script, yamlQuote(sv.Command), yamlQuote(sv.Args[0])))
}

// allTrials reads every result.json of a run folder.
func allTrials(t *testing.T, out string) []run.TrialResult {
	t.Helper()
	var all []run.TrialResult
	paths, _ := filepath.Glob(filepath.Join(out, "trials", "*", "*", "*", "result.json"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var r run.TrialResult
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		all = append(all, r)
	}
	return all
}

// trialResults are the results of a run with one replicate, by "cell condition".
func trialResults(t *testing.T, out string) map[string]run.TrialResult {
	t.Helper()
	got := map[string]run.TrialResult{}
	for _, r := range allTrials(t, out) {
		got[r.Cell+" "+r.Condition] = r
	}
	return got
}

// TestReferenceAgentsOnMemory runs the reference agents against server-memory with
// chaos run: the verdicts are the ones their behaviour implies, read from the real
// server by the mcp probe and, for the swallowed writes, from the record.
func TestReferenceAgentsOnMemory(t *testing.T) {
	t.Parallel()
	env, tmp := testEnv(t)
	specPath := memoryRunSpec(t, tmp)
	out := filepath.Join(tmp, "run")
	res := runChaos(t, env, 15*time.Minute, "run", specPath, "--out", out,
		"--only", "clean,phantom_success@create_entities,transient_error@create_entities,permanent_error@create_entities,truncated_reply@open_nodes")
	if res.code != 0 {
		t.Fatalf("chaos run exited %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	want := map[string]string{
		"agent=blind clean":                               "correct",
		"agent=verifying clean":                           "correct",
		"agent=blind phantom_success@create_entities":     "silent_wrong",
		"agent=verifying phantom_success@create_entities": "correct",
		"agent=blind transient_error@create_entities":     "silent_wrong",
		"agent=verifying transient_error@create_entities": "correct",
		"agent=blind permanent_error@create_entities":     "silent_wrong",
		"agent=verifying permanent_error@create_entities": "reported_honestly",
		"agent=blind truncated_reply@open_nodes":          "not_triggered",
		"agent=verifying truncated_reply@open_nodes":      "correct",
	}
	got := trialResults(t, out)
	for k, v := range want {
		r, ok := got[k]
		if !ok {
			t.Errorf("%s: no result", k)
			continue
		}
		if r.Verdict != v {
			t.Errorf("%s: verdict %s (%s), want %s; checks %+v; closing %q", k, r.Verdict, r.VerdictWhy, v, r.Checks, r.Closing)
		}
	}
	// The probe read the real server: Alice is missing where the blind agent's write was swallowed.
	r := got["agent=blind phantom_success@create_entities"]
	if len(r.Checks) != 2 || r.Checks[0].OK || !strings.Contains(fmt.Sprint(r.Checks[0].Got), "is absent") || r.Checks[1].OK {
		t.Errorf("blind phantom success checks: %+v", r.Checks)
	}
	r = got["agent=verifying phantom_success@create_entities"]
	if len(r.Checks) != 2 || !r.Checks[0].OK || !r.Checks[1].OK || !strings.Contains(fmt.Sprint(r.Checks[1].Got), "made it again") {
		t.Errorf("verifying phantom success checks: %+v", r.Checks)
	}
}

// TestReferenceAgentsOnFilesystemAndEverything drives the reference agents in this
// process (the same code as chaos agent scripted) against server-filesystem over stdio
// and server-everything over streamable HTTP, through the wall.
func TestReferenceAgentsOnFilesystemAndEverything(t *testing.T) {
	url := startEverything(t)
	play := func(t *testing.T, r *rig, style, script string) string {
		t.Helper()
		path := writeFile(t, t.TempDir(), "script.yaml", script)
		sc, err := agents.LoadScript(path)
		if err != nil {
			t.Fatal(err)
		}
		c, err := agents.Dial(context.Background(), "http", "", r.srv.MCPURL())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var out, log bytes.Buffer
		if err := agents.Run(context.Background(), style, sc, c, &out, &log); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	fsScript := func(r *rig) string {
		p := filepath.Join(r.sandbox, "notes.txt")
		return fmt.Sprintf(`writes:
  - name: notes.txt
    tool: write_file
    args: {path: %q, content: "call Dana"}
    check: {tool: read_text_file, args: {path: %q}, path: "$", equals: "call Dana"}
`, p, p)
	}
	onDisk := func(r *rig) bool {
		b, err := os.ReadFile(filepath.Join(r.sandbox, "notes.txt"))
		return err == nil && string(b) == "call Dana"
	}
	t.Run("filesystem, phantom success, blind", func(t *testing.T) {
		r := openRig(t, filesystemSpec(t), "phantom_success@write_file")
		closing := play(t, r, agents.Blind, fsScript(r))
		if !strings.Contains(closing, "STATUS: ok") || onDisk(r) {
			t.Errorf("closing %q, on disk %v: want a claim of success over a file that is not there", closing, onDisk(r))
		}
	})
	t.Run("filesystem, phantom success, verifying", func(t *testing.T) {
		r := openRig(t, filesystemSpec(t), "phantom_success@write_file")
		closing := play(t, r, agents.Verifying, fsScript(r))
		if !strings.Contains(closing, "verified") || !onDisk(r) {
			t.Errorf("closing %q, on disk %v: want the write redone and verified", closing, onDisk(r))
		}
	})
	t.Run("filesystem, truncated read-back, verifying", func(t *testing.T) {
		r := openRig(t, filesystemSpec(t), "truncated_reply@read_text_file")
		closing := play(t, r, agents.Verifying, fsScript(r))
		if !strings.Contains(closing, "verified") || !onDisk(r) {
			t.Errorf("closing %q, on disk %v", closing, onDisk(r))
		}
	})
	const toggle = "writes:\n  - name: simulated logging\n    tool: toggle-simulated-logging\n"
	t.Run("everything, transient error, honest", func(t *testing.T) {
		r := openRig(t, everythingSpec(url, spec.TransportStreamableHTTP), "transient_error@toggle-simulated-logging")
		closing := play(t, r, agents.Honest, toggle)
		if !strings.Contains(closing, "STATUS: failed") || loggingOn(r) {
			t.Errorf("closing %q: want the failure reported and logging never started", closing)
		}
	})
	t.Run("everything, transient error, retrying", func(t *testing.T) {
		r := openRig(t, everythingSpec(url, spec.TransportStreamableHTTP), "transient_error@toggle-simulated-logging")
		closing := play(t, r, agents.Retrying, toggle)
		if !strings.Contains(closing, "STATUS: ok") || !loggingOn(r) {
			t.Errorf("closing %q: want the retry through and logging started", closing)
		}
	})
}
