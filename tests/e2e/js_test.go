package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
)

// jsSummary is what tests/js/client.mjs prints.
type jsSummary struct {
	Server struct {
		Name string `json:"name"`
	} `json:"server"`
	Tools []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
	} `json:"tools"`
	Calls []struct {
		Tool    string         `json:"tool"`
		Args    map[string]any `json:"args"`
		Text    string         `json:"text"`
		IsError bool           `json:"isError"`
		Error   *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	} `json:"calls"`
}

// runJSClient runs tests/js/client.mjs with args and decodes its summary. The client
// is part of the test: with node or its packages missing the test fails, never skips.
func runJSClient(t *testing.T, args ...string) jsSummary {
	t.Helper()
	jsDir := filepath.Join(repoRoot, "tests", "js")
	if _, err := os.Stat(filepath.Join(jsDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		t.Fatalf("the MCP TypeScript SDK is not installed: run npm ci in tests/js (%v)", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not on PATH: install Node.js, then run npm ci in tests/js (%v)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{"client.mjs"}, args...)...)
	cmd.Dir = jsDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node client.mjs %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var s jsSummary
	if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
		t.Fatalf("client.mjs printed %q: %v\nstderr:\n%s", stdout.String(), err, stderr.String())
	}
	return s
}

// checkJSSummary: the TypeScript client saw the spec's tools, the faulted write
// answered as a success, the read showing it was dropped, and the refused call as a
// JSON-RPC invalid-params error.
func checkJSSummary(t *testing.T, s jsSummary) {
	t.Helper()
	sp, err := spec.Load(exampleSpec)
	if err != nil {
		t.Fatal(err)
	}
	if s.Server.Name != "chaos-wall" {
		t.Errorf("server %q, want chaos-wall", s.Server.Name)
	}
	var got, want []string
	for _, tool := range s.Tools {
		got = append(got, tool.Name)
		if tool.Description == "" || !json.Valid(tool.InputSchema) || !bytes.Contains(tool.InputSchema, []byte(`"type":"object"`)) {
			t.Errorf("tool %+v, want a description and an object input schema", tool)
		}
	}
	for _, tool := range sp.Tools {
		want = append(want, tool.Name)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("tools %v, want %v", got, want)
	}

	wantCalls := []struct{ tool, text string }{
		{"read_email", `"ticket": "T-4821"`},
		{"update_ticket", `{"status": "updated"}`}, // the phantom success
		{"update_ticket", `{"status": "updated"}`},
		{"get_ticket_field", `{"field":"priority","value":"normal"}`},
	}
	if len(s.Calls) != len(wantCalls)+1 {
		t.Fatalf("%d calls in the summary, want %d", len(s.Calls), len(wantCalls)+1)
	}
	for i, w := range wantCalls {
		c := s.Calls[i]
		if c.Tool != w.tool || c.Error != nil || c.IsError || !strings.Contains(c.Text, w.text) {
			t.Errorf("call %d = %+v, want %s answering %s", i, c, w.tool, w.text)
		}
	}
	refused := s.Calls[len(wantCalls)]
	if refused.Error == nil || refused.Error.Code != -32602 || !strings.Contains(refused.Error.Message, "value") {
		t.Errorf("call with no value = %+v, want JSON-RPC error -32602 naming \"value\"", refused)
	}
}

// checkJSRecord: the record holds the calls as the client made them, on transport,
// and ends with the final state where the faulted write is missing.
func checkJSRecord(t *testing.T, path, transport string) {
	t.Helper()
	l := readRecord(t, path)
	if l.End == nil || l.Rows[len(l.Rows)-1].Type != record.TypeSessionEnd {
		t.Fatalf("the record does not end with the session end: %+v", l.Rows[len(l.Rows)-1])
	}
	calls := l.Calls()
	var tools []string
	for _, c := range calls {
		tools = append(tools, c.Tool)
		if c.Transport != transport {
			t.Errorf("call %s on transport %q, want %q", c.Tool, c.Transport, transport)
		}
	}
	if want := []string{"read_email", "update_ticket", "update_ticket", "get_ticket_field"}; !slices.Equal(tools, want) {
		t.Errorf("call rows %v, want %v", tools, want)
	}
	if fired := l.Fired(); len(fired) != 1 || fired[0].Args == nil || !bytes.Contains(fired[0].Args, []byte(`"urgent"`)) || fired[0].Hit.Performed {
		t.Errorf("fired rows %+v, want the priority write, not performed", fired)
	}
	var rejected int
	for _, r := range l.Rows {
		if r.Type == record.TypeRejected && r.Status == 400 && r.Transport == transport {
			rejected++
		}
	}
	if rejected != 1 {
		t.Errorf("%d rejected rows on %s, want the call with no value", rejected, transport)
	}
	if l.End.FinalState["priority"] != "normal" || l.End.FinalState["team"] != "payments" || l.End.Fired != 1 {
		t.Errorf("session end %+v, want priority normal (the dropped write), team payments", l.End)
	}
}

// TestJSClientStdio: the TypeScript SDK's StdioClientTransport starts the wall itself,
// as Claude Desktop or an agent framework on that SDK would.
func TestJSClientStdio(t *testing.T) {
	path := filepath.Join(t.TempDir(), "record.jsonl")
	s := runJSClient(t, "stdio", chaosBin, exampleSpec, "phantom_success@update_ticket", path)
	checkJSSummary(t, s)
	// client.mjs closes the session before printing, and the SDK waits for the wall to
	// exit on close, so the record is complete.
	checkJSRecord(t, path, "stdio")
}

var listenURL = regexp.MustCompile(`MCP at (http://\S+/mcp),`)

// TestJSClientHTTP: the TypeScript SDK's StreamableHTTPClientTransport against a wall
// started with --listen; the URL is read from the wall's stderr.
func TestJSClientHTTP(t *testing.T) {
	path := filepath.Join(t.TempDir(), "record.jsonl")
	w := startWall(t, "--spec", exampleSpec, "--condition", "phantom_success@update_ticket", "--record", path, "--listen", "127.0.0.1:0")
	var url string
	select {
	case line, ok := <-w.stderr:
		m := listenURL.FindStringSubmatch(line)
		if !ok || m == nil {
			t.Fatalf("chaos wall's first stderr line %q, want the MCP URL", line)
		}
		url = m[1]
	case <-time.After(15 * time.Second):
		t.Fatal("chaos wall printed no URL in 15s")
	}
	s := runJSClient(t, "http", url)
	checkJSSummary(t, s)
	// With --listen a closed stdin leaves HTTP serving; SIGTERM ends the wall, after it
	// has closed its record (exit 128+15).
	w.stdin.Close()
	w.cmd.Process.Signal(syscall.SIGTERM)
	if code := w.wait(t); code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit code %d after SIGTERM, want %d", code, 128+int(syscall.SIGTERM))
	}
	checkJSRecord(t, path, "http")
}
