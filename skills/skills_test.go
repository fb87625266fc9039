package skills

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDiscover: the user's and the project's skills and servers; a server behind chaos
// proxy unwrapped; literal header and env values never shown, ${VAR}s kept; a narrower
// scope's server wins; allowed-tools decides a skill's servers.
func TestDiscover(t *testing.T) {
	home, project, data := t.TempDir(), t.TempDir(), t.TempDir()
	write(t, filepath.Join(home, ".claude", "skills", "notes", "SKILL.md"), "---\nname: notes\ndescription: Keeps notes in the memory server.\nallowed-tools: mcp__memory__create_entities, Read\n---\n# Notes\n")
	write(t, filepath.Join(project, ".claude", "skills", "triage", "SKILL.md"), "---\ndescription: Triage tickets.\n---\nbody\n")
	write(t, filepath.Join(project, ".claude", "skills", "empty", "README"), "not a skill")
	write(t, filepath.Join(data, "proxy", "servers", "memory.json"), `{"name": "memory", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}`)
	user := map[string]any{
		"mcpServers": map[string]any{
			"memory": map[string]any{"command": "/usr/local/bin/chaos", "args": []string{"proxy", "serve", "--name", "memory"}, "env": map[string]string{"MEMORY_FILE_PATH": "/home/u/secret-memory.json"}},
			"crm":    map[string]any{"type": "http", "url": "https://user:hunter2@crm.example/mcp", "headers": map[string]string{"Authorization": "Bearer sk-live-123456", "X-Team": "${TEAM_ID}"}},
			"fs":     map[string]any{"command": "npx", "args": []string{"server-filesystem", "/user"}},
		},
		"projects": map[string]any{project: map[string]any{"mcpServers": map[string]any{
			"fs": map[string]any{"command": "npx", "args": []string{"server-filesystem", "/local"}},
		}}},
	}
	b, _ := json.Marshal(user)
	write(t, filepath.Join(home, ".claude.json"), string(b))
	write(t, filepath.Join(project, ".mcp.json"), `{"mcpServers": {"fs": {"command": "npx", "args": ["server-filesystem", "/project"]}, "tickets": {"type": "sse", "url": "https://tickets.example/sse", "headers": {"X-Api-Key": "${TICKETS_KEY}"}}}}`)

	f, err := Discover(Options{Home: home, Project: project, ProxyDir: filepath.Join(data, "proxy")})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(f)
	for _, secret := range []string{"sk-live-123456", "hunter2", "secret-memory"} {
		if strings.Contains(string(out), secret) {
			t.Errorf("a value written in the configuration is shown: %s\n%s", secret, out)
		}
	}
	if len(f.Problems) != 0 {
		t.Errorf("problems: %v", f.Problems)
	}
	var names []string
	for _, s := range f.Skills {
		names = append(names, s.Scope+":"+s.Name+"="+strings.Join(s.Servers, ","))
	}
	if want := []string{"user:notes=memory", "project:triage=crm,fs,memory,tickets"}; !reflect.DeepEqual(names, want) {
		t.Errorf("skills %v, want %v", names, want)
	}
	by := map[string]Server{}
	for _, s := range f.Servers {
		by[s.Name] = s
	}
	if m := by["memory"]; m.Command != "npx" || !reflect.DeepEqual(m.Args, []string{"-y", "@modelcontextprotocol/server-memory"}) || !strings.Contains(m.WrappedBy, "proxy serve --name memory") ||
		m.Env["MEMORY_FILE_PATH"] != "${MEMORY_MEMORY_FILE_PATH}" {
		t.Errorf("memory not unwrapped or its env shown: %+v", m)
	}
	if c := by["crm"]; c.Headers["Authorization"] != "${CRM_AUTHORIZATION}" || c.Headers["X-Team"] != "${TEAM_ID}" || c.URL != "https://crm.example/mcp" || c.Type != "http" {
		t.Errorf("crm: %+v", c)
	}
	if fs := by["fs"]; fs.Scope != ScopeLocal || fs.Args[1] != "/local" {
		t.Errorf("fs: %+v, want the local scope's", fs)
	}
	if tk := by["tickets"]; tk.Type != "sse" || tk.Headers["X-Api-Key"] != "${TICKETS_KEY}" || len(tk.Hidden) != 0 {
		t.Errorf("tickets: %+v", tk)
	}
}

// TestDiscoverProblems: a configuration that is not JSON, a wrapper whose real server is
// not set up, and front matter that is not YAML are reported, never fatal.
func TestDiscoverProblems(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	write(t, filepath.Join(home, ".claude.json"), `{"mcpServers": {"m": {"command": "chaos", "args": ["proxy", "serve", "--name", "m"]}}}`)
	write(t, filepath.Join(project, ".mcp.json"), `{not json`)
	write(t, filepath.Join(project, ".claude", "skills", "x", "SKILL.md"), "---\ndescription: [unclosed\n---\n")
	f, err := Discover(Options{Home: home, Project: project, ProxyDir: filepath.Join(t.TempDir(), "proxy")})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Problems) != 3 || len(f.Skills) != 1 || len(f.Servers) != 1 {
		t.Errorf("problems %q, skills %d, servers %d", f.Problems, len(f.Skills), len(f.Servers))
	}
}

// TestDiscoverHostile (issue 28 items 3 and 9): a skill whose name: is a path is refused
// with its SKILL.md line, not listed; secret-looking query values in a server's URL are
// shown as ${VAR} references, the rest of the URL byte for byte.
func TestDiscoverHostile(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	for dir, name := range map[string]string{"up": "../../evil", "slash": "a/b", "dots": "..", "ok": "fine-name"} {
		write(t, filepath.Join(project, ".claude", "skills", dir, "SKILL.md"), "---\ndescription: d\nname: "+name+"\n---\nbody\n")
	}
	write(t, filepath.Join(project, ".mcp.json"), `{"mcpServers": {"crm": {"type": "http", "url": "https://crm.example/mcp?team=7&token=tok-123&api_key=key-456&Access_Token=at-789&password=pw-000&keep=${KEEP}&auth=${AUTH}#frag"}}}`)
	f, err := Discover(Options{Home: home, Project: project})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Skills) != 1 || f.Skills[0].Name != "fine-name" {
		t.Errorf("skills %+v; want only fine-name", f.Skills)
	}
	for _, name := range []string{"../../evil", "a/b", ".."} {
		why := f.Refused[name]
		if !strings.Contains(why, "SKILL.md:3: the skill's name "+strconv.Quote(name)) {
			t.Errorf("the name %q: refused with %q; want SKILL.md:3 and the name", name, why)
		}
	}
	out, _ := json.Marshal(f)
	for _, secret := range []string{"tok-123", "key-456", "at-789", "pw-000"} {
		if strings.Contains(string(out), secret) {
			t.Errorf("a query value is shown: %s\n%s", secret, out)
		}
	}
	want := "https://crm.example/mcp?team=7&token=${CRM_QUERY_TOKEN}&api_key=${CRM_QUERY_API_KEY}&Access_Token=${CRM_QUERY_ACCESS_TOKEN}&password=${CRM_QUERY_PASSWORD}&keep=${KEEP}&auth=${AUTH}#frag"
	if got := f.Servers[0].URL; got != want {
		t.Errorf("url %s\nwant %s", got, want)
	}
}
