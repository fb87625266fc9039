package infer

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/proxies/upstream"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
	"gopkg.in/yaml.v3"
)

func TestServerName(t *testing.T) {
	tests := []struct {
		line  string
		taken []string
		want  string
	}{
		{"npx -y @modelcontextprotocol/server-memory", nil, "memory"},
		{"MEMORY_FILE_PATH=/x node /a/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js /tmp", nil, "filesystem"},
		{"uvx mcp-server-git --repository .", nil, "git"},
		{"/usr/local/bin/crm-mcp.py --verbose", nil, "crm-mcp"},
		{"https://crm.example.com/mcp", nil, "remote"},
		{"npx -y @modelcontextprotocol/server-memory", []string{"memory"}, "memory2"},
	}
	for _, tt := range tests {
		if got := ServerName(tt.line, tt.taken); got != tt.want {
			t.Errorf("ServerName(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

func TestInferSpec(t *testing.T) {
	call := func(seq int, tool, args, reply, structured string) record.Row {
		r := record.Row{Type: record.TypeCall, Seq: seq, Tool: tool, Args: json.RawMessage(args), Reply: reply, Status: 200}
		if structured != "" {
			r.Structured = json.RawMessage(structured)
		}
		return r
	}
	rows := []record.Row{
		{Type: record.TypeSessionStart, Seq: 1},
		call(2, "write_file", `{"path":"/tmp/rec1/notes.txt","content":"call Dana"}`, "Successfully wrote to /tmp/rec1/notes.txt", `{"content":"Successfully wrote to /tmp/rec1/notes.txt"}`),
		call(3, "read_text_file", `{"path":"/tmp/rec1/notes.txt"}`, "call Dana", `{"content":"call Dana"}`),
		call(4, "create_directory", `{"path":"/tmp/rec1/archive"}`, "Created", ""),
	}
	log := &record.Log{Start: &rows[0], Rows: rows}
	servers := []spec.Server{{Name: "fs", Command: "node", Args: []string{"fs.js", "{sandbox}"}, Env: map[string]string{"FS_TOKEN": "abc123"}}}
	tools := []spec.Tool{
		{Name: "write_file", Effect: spec.EffectWrite, Server: "fs", Remote: "write_file"},
		{Name: "read_text_file", Effect: spec.EffectRead, Server: "fs", Remote: "read_text_file"},
		{Name: "create_directory", Effect: spec.EffectWrite, Server: "fs", Remote: "create_directory"},
	}
	classes := []upstream.Classification{
		{Tool: "write_file", Server: "fs", Remote: "write_file", Effect: spec.EffectWrite, From: "annotation destructiveHint: true"},
		{Tool: "read_text_file", Server: "fs", Remote: "read_text_file", Effect: spec.EffectRead, From: "annotation readOnlyHint: true"},
		{Tool: "create_directory", Server: "fs", Remote: "create_directory", Effect: spec.EffectWrite, From: "annotation readOnlyHint: false"},
	}
	text, summary, err := Spec(Recording{
		Name: "notes", Task: "Write the note", Argv: []string{"my-agent", "--mcp", "{mcp_config}", "{task}"},
		Servers: servers, Classes: classes, Tools: tools, Log: log, Stdout: "All done.\nSTATUS: ok\n",
		Sandbox: "/tmp/rec1", Now: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# Written by chaos record on 2026-11-29 12:00 UTC from one real run of the agent.",
		"# - env FS_TOKEN looks like a secret: the spec holds ${FS_TOKEN}",
		"# - write_file writes (annotation destructiveHint: true)",
		`# - read_text_file read back what write_file wrote: "call Dana" at $.content`,
		"# - nothing read back what create_directory wrote (call 3): no probe for it; add one under probes:",
		"# - the agent made 3 calls (0 failed): write_file, read_text_file, create_directory",
		"# - the agent's closing message has a STATUS: line",
		"FS_TOKEN: ${FS_TOKEN}",
		"path: '{sandbox}/notes.txt'",
		"equals: call Dana",
		"reply: Successfully wrote to {sandbox}/notes.txt",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the spec has no %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "abc123") || strings.Contains(text, "/tmp/rec1") {
		t.Errorf("the spec holds the secret or the recorded run's folder:\n%s", text)
	}
	s, err := spec.Parse("notes.yaml", []byte(text))
	if err != nil {
		t.Fatalf("the spec does not load: %v\n%s", err, text)
	}
	if p := s.AllProbes(); len(p) != 1 || p[0].Want.Key != "$.content" || p[0].Want.Equals != "call Dana" {
		t.Errorf("probes %+v", p)
	}
	if summary != "1 server(s), 3 tools, 3 calls recorded, 1 probe(s) inferred" {
		t.Errorf("summary %q", summary)
	}
}

// TestRecordedSpecIsData: a server's tool name and reply, the agent's arguments, holding
// line breaks of every kind YAML knows, comment and document markers and a would-be
// probe, stay data: every line of the header is a comment, and the spec loads back to
// exactly what chaos meant to write, with no probe it did not infer.
func TestRecordedSpecIsData(t *testing.T) {
	evil := "x\r\nprobes: [{command: touch /tmp/pwned}]\r# c\n---\n...\u2028probes:\u0085a\u2029\x00\xff'\"#: &a *a !!str"
	tool := "lookup" + evil
	rows := []record.Row{
		{Type: record.TypeSessionStart, Seq: 1},
		{Type: record.TypeCall, Seq: 2, Tool: "save", Args: json.RawMessage(`{"v":"val\r\nprobes: x"}`), Reply: "saved\r" + evil, Status: 200},
		{Type: record.TypeCall, Seq: 3, Tool: "lookup", Args: json.RawMessage(`{}`), Reply: `{"v":"val\r\nprobes: x"}`, Status: 200},
	}
	in := Recording{
		Name: "rec", Task: "do it\r\nprobes: []", Argv: []string{"agent", "{task}"},
		Servers: []spec.Server{{Name: "srv", Command: "node", Args: []string{"s.js"}}},
		Classes: []upstream.Classification{
			{Tool: "save", Server: "srv", Remote: "save" + evil, Effect: spec.EffectWrite, From: "annotation" + evil},
			{Tool: "lookup", Server: "srv", Remote: tool, Effect: spec.EffectRead, From: "name"},
		},
		Tools: []spec.Tool{
			{Name: "save", Effect: spec.EffectWrite, Server: "srv", Remote: "save" + evil},
			{Name: "lookup", Effect: spec.EffectRead, Server: "srv", Remote: tool},
		},
		Log: &record.Log{Start: &rows[0], Rows: rows}, Stdout: "done" + evil, Now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
	}
	want, notes := buildSpec(in)
	text, err := writeSpec(want, notes, in.Now)
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(text, "\n\n")
	for _, line := range strings.Split(head, "\n") {
		if !strings.HasPrefix(line, "#") || strings.ContainsAny(line, "\r\u0085\u2028\u2029") {
			t.Errorf("a header line is not one comment: %q", line)
		}
	}
	if n := strings.Count(head, "\n") + 1; n != len(notes)+3 {
		t.Errorf("the header has %d lines; want %d (3 + one per note)", n, len(notes)+3)
	}
	var got recordedSpec
	if err := yaml.Unmarshal([]byte(text), &got); err != nil {
		t.Fatalf("the spec does not decode: %v\n%s", err, text)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the spec decodes to\n%#v\nwant\n%#v", got, want)
	}
	var top map[string]any
	yaml.Unmarshal([]byte(text), &top)
	for k := range top {
		if !slices.Contains([]string{"name", "task", "agent", "servers", "probes", "claim"}, k) {
			t.Errorf("top-level key %q that chaos did not write", k)
		}
	}
	s, err := spec.Parse("rec.yaml", []byte(text))
	if err != nil {
		t.Fatalf("the spec does not load: %v\n%s", err, text)
	}
	for _, p := range s.AllProbes() {
		if p.Kind != "mcp" || p.Command != "" {
			t.Errorf("a command probe came from the server's text: %+v", p)
		}
	}
	if len(s.Tasks) != 1 || s.Tasks[0].Prompt != in.Task || len(s.Servers) != 1 || s.Servers[0].Name != "srv" {
		t.Errorf("loaded tasks %+v, servers %+v", s.Tasks, s.Servers)
	}
}

// commentText leaves nothing that ends a YAML comment line.
func TestCommentText(t *testing.T) {
	for in, want := range map[string]string{
		"plain # text 'q'":          "plain # text 'q'",
		"a\rb\nc\td\x00":            `a\rb\nc\td\x00`,
		"nel\u0085ls\u2028ps\u2029": `nel\u0085ls\u2028ps\u2029`,
		"bom\ufeff bad\xff":         `bom\ufeff bad\xff`,
		"é ✓":                       "é ✓",
	} {
		if got := commentText(in); got != want {
			t.Errorf("commentText(%q) = %q; want %q", in, got, want)
		}
	}
}
