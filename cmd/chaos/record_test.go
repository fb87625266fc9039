package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/proxies"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
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
		if got := serverName(tt.line, tt.taken); got != tt.want {
			t.Errorf("serverName(%q) = %q, want %q", tt.line, got, tt.want)
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
	classes := []proxies.Classification{
		{Tool: "write_file", Server: "fs", Remote: "write_file", Effect: spec.EffectWrite, From: "annotation destructiveHint: true"},
		{Tool: "read_text_file", Server: "fs", Remote: "read_text_file", Effect: spec.EffectRead, From: "annotation readOnlyHint: true"},
		{Tool: "create_directory", Server: "fs", Remote: "create_directory", Effect: spec.EffectWrite, From: "annotation readOnlyHint: false"},
	}
	text, summary, err := inferSpec(inference{
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
