package upstream

import (
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

func TestSplitCommand(t *testing.T) {
	tests := []struct {
		line string
		want []string
		err  string
	}{
		{"node server.js --port 3", []string{"node", "server.js", "--port", "3"}, ""},
		{`sh -c 'echo "a b"; exit 1'`, []string{"sh", "-c", `echo "a b"; exit 1`}, ""},
		{`a "b \"c\" d" e\ f`, []string{"a", `b "c" d`, "e f"}, ""},
		{`a ''`, []string{"a", ""}, ""},
		{`a 'b`, nil, `unclosed ' in "a 'b"`},
	}
	for _, tt := range tests {
		got, err := SplitCommand(tt.line)
		if (err != nil && err.Error() != tt.err) || (err == nil && tt.err != "") || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SplitCommand(%q) = %q, %v; want %q, %s", tt.line, got, err, tt.want, tt.err)
		}
	}
}

func TestServerFromCommand(t *testing.T) {
	s, err := ServerFromCommand("memory", "MEMORY_FILE_PATH={sandbox}/m.jsonl API_TOKEN=x npx -y @modelcontextprotocol/server-memory")
	if err != nil {
		t.Fatal(err)
	}
	want := spec.Server{Name: "memory", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-memory"},
		Env: map[string]string{"MEMORY_FILE_PATH": "{sandbox}/m.jsonl", "API_TOKEN": "x"}}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("got %+v\nwant %+v", s, want)
	}
	if s, _ := ServerFromCommand("crm", "https://crm.example.com/mcp"); s.URL != "https://crm.example.com/mcp" || s.Stdio() {
		t.Errorf("url server %+v", s)
	}
	if s, _ := ServerFromCommand("legacy", "sse+https://legacy.example.com/sse"); s.URL != "https://legacy.example.com/sse" || !s.SSE() {
		t.Errorf("sse server %+v", s)
	}
	if s, _ := ServerFromCommand("crm", "https://crm.example.com/mcp"); s.SSE() || s.Transport != "" {
		t.Errorf("a plain URL is streamable HTTP: %+v", s)
	}
	if _, err := ServerFromCommand("x", "A=b"); err == nil {
		t.Error("a server with only an environment was accepted")
	}
}

func TestClassifyByNameAndDescription(t *testing.T) {
	tests := []struct {
		tool   mcp.Tool
		effect spec.Effect
		from   string
	}{
		{mcp.Tool{Name: "updateContact"}, spec.EffectWrite, `name: "updateContact" starts with "update", a verb that changes things`},
		{mcp.Tool{Name: "delete-file"}, spec.EffectWrite, `name: "delete-file" starts with "delete", a verb that changes things`},
		{mcp.Tool{Name: "get_contact"}, spec.EffectRead, `name: "get_contact" starts with "get", a verb that reads`},
		{mcp.Tool{Name: "contact", Description: "Sends a message to a contact."}, spec.EffectWrite, `description starts with "send", a verb that changes things`},
		{mcp.Tool{Name: "contact", Description: "Search contacts by name."}, spec.EffectRead, `description starts with "search", a verb that reads`},
		{mcp.Tool{Name: "ping"}, spec.EffectRead, "no annotation, name or description says it writes: taken as a read (set effect: write in the spec if it does)"},
		{mcp.Tool{Name: "create_x", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, spec.EffectRead, "annotation readOnlyHint: true"},
	}
	for _, tt := range tests {
		e, from := Classify(spec.Server{Name: "s"}, &tt.tool)
		if e != tt.effect || from != tt.from {
			t.Errorf("%s: %s %q, want %s %q", tt.tool.Name, e, from, tt.effect, tt.from)
		}
	}
}

func TestAdapt(t *testing.T) {
	prev := exchange{
		args:  map[string]any{"path": "/tmp/a.txt", "content": "one"},
		reply: world.Reply{Text: "Successfully wrote to /tmp/a.txt", Structured: `{"content":"Successfully wrote to /tmp/a.txt"}`, Status: 200},
	}
	got := adapt(prev, map[string]any{"path": "/tmp/b.txt", "content": "two"})
	if got.Text != "Successfully wrote to /tmp/b.txt" || got.Structured != `{"content":"Successfully wrote to /tmp/b.txt"}` {
		t.Errorf("adapt = %+v", got)
	}
	echo := exchange{
		args:  map[string]any{"entities": []any{map[string]any{"name": "Bob"}}},
		reply: world.Reply{Text: "[\n  {\n    \"name\": \"Bob\"\n  }\n]", Structured: `{"entities":[{"name":"Bob"}]}`},
	}
	got = adapt(echo, map[string]any{"entities": []any{map[string]any{"name": "Alice"}, map[string]any{"name": "Carol"}}})
	if !strings.Contains(got.Text, "\n  {\n    \"name\": \"Alice\"") || !strings.Contains(got.Text, "Carol") || got.Structured != `{"entities":[{"name":"Alice"},{"name":"Carol"}]}` {
		t.Errorf("adapt echo = %+v", got)
	}
}

func TestRedact(t *testing.T) {
	e, err := resolve(spec.Server{Name: "r", URL: "https://h/mcp?key=${K}", Headers: map[string]string{"Authorization": "Bearer ${T}"}}, "",
		func(n string) (string, bool) { return map[string]string{"K": "kkkk1234", "T": "tttt5678"}[n], true })
	if err != nil {
		t.Fatal(err)
	}
	msg := redactor(e.secrets).redact("Post https://h/mcp?key=kkkk1234: header Bearer tttt5678 refused")
	if strings.Contains(msg, "kkkk1234") || strings.Contains(msg, "tttt5678") {
		t.Errorf("redact left a secret: %q", msg)
	}
	if e.url != "https://h/mcp?key=kkkk1234" || e.headers["Authorization"] != "Bearer tttt5678" {
		t.Errorf("resolve %+v", e)
	}
}

func TestMCPConfigTypes(t *testing.T) {
	got := MCPConfig([]spec.Server{
		{Name: "m", Command: "node", Args: []string{"s.js", "{sandbox}/d"}},
		{Name: "crm", URL: "https://crm.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer ${T}"}},
		{Name: "legacy", URL: "https://legacy.example.com/sse", Transport: spec.TransportSSE},
	}, "/tmp/s1")
	want := `{"mcpServers":{"crm":{"type":"http","url":"https://crm.example.com/mcp","headers":{"Authorization":"Bearer ${T}"}},` +
		`"legacy":{"type":"sse","url":"https://legacy.example.com/sse"},"m":{"type":"stdio","command":"node","args":["s.js","/tmp/s1/d"]}}}`
	if got != want {
		t.Errorf("MCPConfig =\n%s\nwant\n%s", got, want)
	}
}
