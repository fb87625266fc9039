package spec

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

const serversBase = `name: s
task: remember Alice
agent: {command: "run {wall}"}
`

func TestLoadServersAndProbes(t *testing.T) {
	s, err := Parse("spec.yaml", []byte(serversBase+`servers:
  - name: memory
    command: node
    args: [server.js, "{sandbox}"]
    env: {MEMORY_FILE_PATH: "{sandbox}/m.jsonl", API_KEY: "${KEY}"}
    tools:
      create_entities: {effect: write, reply: '[{"name": "Alice"}]', structured: {entities: [{name: Alice}]}}
      ping: {effect: none}
  - name: crm
    url: "https://crm.example.com/mcp?token=${CRM_TOKEN}"
    headers: {Authorization: "Bearer ${CRM_KEY}"}
  - name: legacy
    url: "https://legacy.example.com/sse"
    transport: sse
    headers: {Authorization: "Bearer ${LEGACY_KEY}"}
  - {name: plain, url: "https://plain.example.com/mcp", transport: streamable-http}
faults: [phantom_success]
conditions:
  - {id: lost, family: phantom_success, tool: create_entities, at: 2}
probes:
  - mcp: {server: memory, tool: open_nodes, args: {names: [Alice]}, path: "$.entities[0].name", equals: Alice}
  - mcp: {server: crm, tool: get_contact, args: {id: 7}, absent: true}
  - {command: "./check.sh", timeout: 10s}
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Tools) != 0 {
		t.Errorf("tools %+v: a spec with servers needs none of its own", s.Tools)
	}
	mem := s.Servers[0]
	if mem.Name != "memory" || mem.Command != "node" || !reflect.DeepEqual(mem.Args, []string{"server.js", "{sandbox}"}) ||
		mem.Env["API_KEY"] != "${KEY}" || mem.Tools["create_entities"].Effect != EffectWrite ||
		string(mem.Tools["create_entities"].Structured) != `{"entities":[{"name":"Alice"}]}` || mem.Tools["ping"].Effect != EffectNone {
		t.Errorf("memory %+v", mem)
	}
	if crm := s.Servers[1]; crm.Stdio() || crm.SSE() || crm.Transport != "" || crm.Headers["Authorization"] != "Bearer ${CRM_KEY}" {
		t.Errorf("crm %+v", crm)
	}
	if legacy := s.Servers[2]; legacy.Stdio() || !legacy.SSE() || legacy.Transport != TransportSSE || legacy.Headers["Authorization"] != "Bearer ${LEGACY_KEY}" {
		t.Errorf("legacy %+v", legacy)
	}
	if plain := s.Servers[3]; plain.SSE() || plain.Transport != TransportStreamableHTTP {
		t.Errorf("plain %+v", plain)
	}
	if mem.SSE() {
		t.Errorf("a stdio server says it is SSE")
	}
	ps := s.Tasks[0].Probes
	if len(ps) != 3 {
		t.Fatalf("probes %+v", ps)
	}
	if p := ps[0]; p.Kind != "mcp" || p.Server != "memory" || string(p.Args) != `{"names":["Alice"]}` || p.Want.Key != "$.entities[0].name" || p.Want.Op != "equals" || p.Want.Equals != "Alice" {
		t.Errorf("probe 0 %+v", p)
	}
	if p := ps[1]; p.Want.Op != "absent" || p.Want.Key != "$" {
		t.Errorf("probe 1 %+v", p)
	}
	if p := ps[2]; p.Kind != "command" || p.Command != "./check.sh" || p.Timeout.String() != "10s" {
		t.Errorf("probe 2 %+v", p)
	}
	// The plan travels as JSON; the servers do too.
	b, _ := json.Marshal(s)
	var back Spec
	err = json.Unmarshal(b, &back)
	b2, _ := json.Marshal(back)
	if err != nil || string(b) != string(b2) {
		t.Errorf("servers through JSON: %v\n%s\n%s", err, b, b2)
	}
}

func TestServerProblems(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"neither command nor url", "servers:\n  - {name: x}\n",
			[]string{`spec.yaml:5: server "x" needs command (a stdio server) or url (a remote server)`}},
		{"both", "servers:\n  - {name: x, command: a, url: \"http://h/mcp\"}\n",
			[]string{`spec.yaml:5: server "x" has both command and url; give one`}},
		{"no name", "servers:\n  - {command: a}\n",
			[]string{`spec.yaml:5: server #1 has no name (it prefixes its tools' names where they collide)`}},
		{"twice", "servers:\n  - {name: x, command: a}\n  - {name: x, command: b}\n",
			[]string{`spec.yaml:6: server "x" is defined twice (first at line 5)`}},
		{"secret on the command line", "servers:\n  - {name: x, command: a, args: [\"--token=${T}\"]}\n",
			[]string{`spec.yaml:5: server "x": ${T} in the command line would show in the process list; pass it in env instead`}},
		{"not http", "servers:\n  - {name: x, url: \"ftp://h/mcp\"}\n",
			[]string{`spec.yaml:5: server "x": url must be an http(s) URL of an MCP endpoint, got "ftp://h/mcp"`}},
		{"unknown transport", "servers:\n  - name: x\n    url: \"http://h/sse\"\n    transport: sse2\n",
			[]string{`spec.yaml:7: server "x": unknown transport "sse2" (did you mean sse?)`}},
		{"transport in an MCP client's words", "servers:\n  - {name: x, url: \"http://h/mcp\", transport: http}\n",
			[]string{`spec.yaml:5: server "x": unknown transport "http" (did you mean streamable-http?)`}},
		{"transport far from any", "servers:\n  - {name: x, url: \"http://h/mcp\", transport: websocket}\n",
			[]string{`spec.yaml:5: server "x": unknown transport "websocket" (known: streamable-http, sse)`}},
		{"transport not text", "servers:\n  - {name: x, url: \"http://h/mcp\", transport: [sse]}\n",
			[]string{`spec.yaml:5: server "x": transport must be text, got a list`}},
		{"transport with a command", "servers:\n  - name: x\n    command: a\n    transport: sse\n",
			[]string{`spec.yaml:7: server "x": transport goes with url, not command (a command is a stdio server)`}},
		{"type as in .mcp.json", "servers:\n  - name: x\n    url: \"http://h/sse\"\n    type: sse\n",
			[]string{`spec.yaml:7: unknown key "type" in server "x" (did you mean transport?)`}},
		{"the --server form of an SSE url", "servers:\n  - {name: x, url: \"sse+https://h/sse?key=${K}\"}\n",
			[]string{`spec.yaml:5: server "x": url must be an http(s) URL; for a server that speaks SSE write "https://h/sse" and transport: sse`}},
		{"credentials in the url", "servers:\n  - {name: x, url: \"https://u:p@h/mcp\"}\n",
			[]string{`spec.yaml:5: server "x": url must not hold credentials; pass them in headers as ${VAR}`}},
		{"headers with a command", "servers:\n  - {name: x, command: a, headers: {A: b}}\n",
			[]string{`spec.yaml:5: server "x": headers go with url, not command`}},
		{"bad effect", "servers:\n  - {name: x, command: a, tools: {t: {effect: writes}}}\n",
			[]string{`spec.yaml:5: server "x": tool "t": effect must be none, read or write, got "writes"`}},
		{"probe of an unknown server", "servers:\n  - {name: memory, command: a}\nprobes:\n  - mcp: {server: memroy, tool: t, equals: 1}\n",
			[]string{`spec.yaml:7: mcp probe: unknown server "memroy" (did you mean memory?)`}},
		{"probe without a comparison", "servers:\n  - {name: m, command: a}\nprobes:\n  - mcp: {server: m, tool: t}\n",
			[]string{`spec.yaml:7: mcp probe needs one of equals, not_equals, contains, matches, absent`}},
		{"probe path", "servers:\n  - {name: m, command: a}\nprobes:\n  - mcp: {server: m, tool: t, path: entities, equals: 1}\n",
			[]string{`spec.yaml:7: mcp probe: path must be a JSON path starting with $, got "entities"`}},
		{"probe of both kinds", "servers:\n  - {name: m, command: a}\nprobes:\n  - {mcp: {server: m, tool: t, equals: 1}, command: x}\n",
			[]string{`spec.yaml:7: a probe is either mcp or command, not both`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("spec.yaml", []byte(serversBase+tt.yaml))
			var errs *Errors
			if !errors.As(err, &errs) {
				t.Fatalf("err = %v, want problems", err)
			}
			var got []string
			for _, p := range errs.Problems {
				got = append(got, p.String())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(tt.want, "\n\t"))
			}
		})
	}
}

func TestExpandSecrets(t *testing.T) {
	lookup := func(n string) (string, bool) {
		if n == "A" {
			return "x1", true
		}
		return "", false
	}
	if got, err := ExpandSecrets("Bearer ${A}", lookup); err != nil || got != "Bearer x1" {
		t.Errorf("ExpandSecrets = %q, %v", got, err)
	}
	if _, err := ExpandSecrets("${A}${B}", lookup); err == nil || err.Error() != "the environment variable B is not set" {
		t.Errorf("err = %v", err)
	}
	if got := FillSandbox("{sandbox}/m.jsonl", "/tmp/t1"); got != "/tmp/t1/m.jsonl" {
		t.Errorf("FillSandbox = %q", got)
	}
}
