package upstream_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/tests/testkit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestManualMode puts the wall in front of server-memory for an agent chaos does not
// start (a desktop app, played here by the Go SDK client): setup prints the config
// entry, the proxy passes calls through untouched while no run is open, start arms a
// fault the user is not told, end shows the calls with the faulted one marked, the
// fault and the verdict, and results sums the runs up per fault.
func TestManualMode(t *testing.T) {
	t.Parallel()
	env, tmp := testEnv(t, "MEMORY_FILE_PATH="+filepath.Join(t.TempDir(), "memory.jsonl"))
	data := filepath.Join(tmp, "data", "chaos", "proxy")
	sv := memoryServer(t)

	setup := runChaos(t, env, time.Minute, append([]string{"proxy", "setup", "--name", "memory", "--", sv.Command}, sv.Args...)...)
	if setup.code != 0 {
		t.Fatalf("setup: exit %d: %s", setup.code, setup.stderr)
	}
	var entry struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	body := setup.stdout[strings.Index(setup.stdout, "{") : strings.LastIndex(setup.stdout, "}")+1]
	if err := json.Unmarshal([]byte(body), &entry); err != nil {
		t.Fatalf("setup printed no config entry: %v\n%s", err, setup.stdout)
	}
	e := entry.MCPServers["memory"]
	if !slices.Equal(e.Args, []string{"proxy", "serve", "--name", "memory"}) || e.Command == "" {
		t.Fatalf("entry %+v", e)
	}

	// The agent starts the entry's command, as a desktop app would.
	ctx := context.Background()
	cs := testkit.MCPClient(t, ctx, "desktop-app", chaosBin, env, e.Args...)
	call := func(tool string, args any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		text := ""
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text += tc.Text
			}
		}
		return text, res.IsError
	}
	create := func(name string) map[string]any {
		return map[string]any{"entities": []any{map[string]any{"name": name, "entityType": "person", "observations": []any{}}}}
	}

	// No run open: the call passes through and nothing is recorded.
	if text, isErr := call("create_entities", create("Bob")); isErr || !strings.Contains(text, "Bob") {
		t.Fatalf("pass-through: %q %v", text, isErr)
	}
	if _, err := os.Stat(filepath.Join(data, "runs")); err == nil {
		t.Fatal("a call outside a run was recorded")
	}

	// The deck for this user, fixed so the test knows the first fault.
	writeFile(t, data, "deck.json", `{"deck": ["phantom_success", "transient_error", "phantom_failure", "permanent_error", "session_drop", "truncated_reply", "premature_read"], "next": 0}`)
	start := runChaos(t, env, time.Minute, "proxy", "start")
	if start.code != 0 || strings.Contains(start.stdout, "phantom") || !strings.Contains(start.stdout, "fault you are not told") {
		t.Fatalf("start: exit %d\n%s%s", start.code, start.stdout, start.stderr)
	}
	if text, isErr := call("read_graph", map[string]any{}); isErr || !strings.Contains(text, "Bob") {
		t.Errorf("read_graph: %q", text)
	}
	if text, isErr := call("create_entities", create("Alice")); isErr || !strings.Contains(text, "Alice") {
		t.Errorf("the faulted write should look like a success: %q %v", text, isErr)
	}
	if text, _ := call("read_graph", map[string]any{}); strings.Contains(text, "Alice") {
		t.Errorf("the fabricated write reached the server: %q", text)
	}
	end := runChaos(t, env, time.Minute, "proxy", "end", "--said", "done")
	if end.code != 0 {
		t.Fatalf("end: exit %d: %s", end.code, end.stderr)
	}
	for _, want := range []string{
		"3 calls",
		"create_entities",
		"<- FAULT: acknowledged, not stored",
		"The fault: phantom_success on create_entities",
		"never made it again",
		"Verdict: silent_wrong",
	} {
		if !strings.Contains(end.stdout, want) {
			t.Errorf("end printed no %q:\n%s", want, end.stdout)
		}
	}
	if strings.Count(end.stdout, "<- FAULT") != 1 {
		t.Errorf("end should mark exactly one call:\n%s", end.stdout)
	}

	// The run is over: calls pass through again, and reach the server.
	if text, isErr := call("create_entities", create("Carol")); isErr || !strings.Contains(text, "Carol") {
		t.Errorf("after the run: %q %v", text, isErr)
	}
	if text, _ := call("read_graph", map[string]any{}); !strings.Contains(text, "Carol") {
		t.Errorf("after the run the write did not reach the server: %q", text)
	}

	// The next run deals the next fault: a read that is answered 503 and not forwarded.
	runChaos(t, env, time.Minute, "proxy", "start")
	if _, isErr := call("read_graph", map[string]any{}); !isErr {
		t.Error("transient_error did not hit the first call")
	}
	end = runChaos(t, env, time.Minute, "proxy", "end", "--said", "not-done", "--world", "right")
	if !strings.Contains(end.stdout, "The fault: transient_error on read_graph") || !strings.Contains(end.stdout, "Verdict: over_cautious") {
		t.Errorf("second run:\n%s", end.stdout)
	}

	results := runChaos(t, env, time.Minute, "proxy", "results")
	for _, want := range []string{"phantom_success", "silent_wrong 1", "transient_error", "over_cautious 1", "Not run yet: phantom_failure"} {
		if !strings.Contains(results.stdout, want) {
			t.Errorf("results has no %q:\n%s", want, results.stdout)
		}
	}
}

// TestManualDeck: seven runs see every fault once, in an order shuffled per user; the
// eighth starts a new deck.
func TestManualDeck(t *testing.T) {
	t.Parallel()
	env, tmp := testEnv(t)
	if res := runChaos(t, env, time.Minute, "proxy", "start"); res.code != 1 || !strings.Contains(res.stderr, "chaos proxy setup") {
		t.Errorf("start with nothing set up: exit %d %q", res.code, res.stderr)
	}
	runChaos(t, env, time.Minute, "proxy", "setup", "--name", "x", "--", "true")
	var seen []string
	for i := range 8 {
		if res := runChaos(t, env, time.Minute, "proxy", "start"); res.code != 0 {
			t.Fatalf("start %d: %s", i, res.stderr)
		}
		if i == 0 {
			if res := runChaos(t, env, time.Minute, "proxy", "start"); res.code != 1 || !strings.Contains(res.stderr, "already open") {
				t.Errorf("a second start: exit %d %q", res.code, res.stderr)
			}
		}
		b, err := os.ReadFile(filepath.Join(tmp, "data", "chaos", "proxy", "current.json"))
		if err != nil {
			t.Fatal(err)
		}
		var run struct{ Family string }
		json.Unmarshal(b, &run)
		seen = append(seen, run.Family)
		res := runChaos(t, env, time.Minute, "proxy", "end", "--said", "unsure")
		if res.code != 0 || !strings.Contains(res.stdout, "not_triggered") {
			t.Errorf("end %d: exit %d\n%s%s", i, res.code, res.stdout, res.stderr)
		}
	}
	first := slices.Clone(seen[:7])
	slices.Sort(first)
	want := []string{"permanent_error", "phantom_failure", "phantom_success", "premature_read", "session_drop", "transient_error", "truncated_reply"}
	if !slices.Equal(first, want) {
		t.Errorf("the first seven runs dealt %v, want each fault once", seen[:7])
	}
	if !slices.Contains(want, seen[7]) {
		t.Errorf("the eighth run dealt %q", seen[7])
	}
	if res := runChaos(t, env, time.Minute, "proxy", "end", "--said", "done"); res.code != 1 || !strings.Contains(res.stderr, "no run is open") {
		t.Errorf("end with no run: exit %d %q", res.code, res.stderr)
	}
}
