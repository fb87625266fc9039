package spec

import (
	"strings"
	"testing"
)

func TestScripts(t *testing.T) {
	s, err := Parse("p.yaml", []byte(`
task: t
agent: {command: "sh a.sh {shim_path}"}
scripts:
  - {name: book, path: scripts/book.py, effect: write, once: true, args: [order], key: "s/{order}", value: "{carrier}"}
  - {name: get, path: "scripts/get*.js", effect: read, args: [order], key: "s/{order}"}
  - {path: "tools/*.py", real: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Tools) != 2 || s.Tools[0].Name != "book" || s.Tools[0].KeyField != ScriptKeyArg || s.Tools[0].Hints == nil || *s.Tools[0].Hints.Idempotent {
		t.Errorf("tools %+v: want book (key field key, not idempotent) and get", s.Tools)
	}
	if got := strings.Join(s.Launchers(), ","); got != "node,python,python3" {
		t.Errorf("launchers %s, want node,python,python3 (from the extensions)", got)
	}
	if sc := s.Scripts[1]; sc.Failure != DefaultScriptFailure || sc.SessionExpired != DefaultScriptSessionExpired {
		t.Errorf("defaults: %+v", sc)
	}
}

// TestScriptAdapter: an adapter entry keeps its command line, takes the default timeout,
// and stores what its adapter replies (no value template of its own).
func TestScriptAdapter(t *testing.T) {
	s, err := Parse("p.yaml", []byte(`
task: t
agent: {command: "sh a.sh"}
scripts:
  - {name: book, path: scripts/book.py, effect: write, args: [order], key: "s/{order}", adapter: [python3, twin/a.py]}
  - {name: get, path: scripts/get.py, effect: read, args: [order], key: "s/{order}", adapter: [python3, twin/a.py], adapter_timeout: 10s}
`))
	if err != nil {
		t.Fatal(err)
	}
	book, get := s.Scripts[0], s.Scripts[1]
	if strings.Join(book.Adapter, " ") != "python3 twin/a.py" || book.AdapterTimeout != DefaultAdapterTimeout || book.Value != "" {
		t.Errorf("book: %+v; want the adapter, the default timeout, no value template", book)
	}
	if get.AdapterTimeout != Duration(10e9) {
		t.Errorf("get: timeout %v, want 10s", get.AdapterTimeout)
	}
}

func TestScriptsRefused(t *testing.T) {
	cases := []struct{ yaml, want string }{
		{"scripts: [{name: a, effect: read}]", "has no path"},
		{"scripts: [{name: a, path: x.py, effect: write}]", "a write needs key"},
		{"scripts: [{name: a, path: bin/x}]", "give its launchers"},
		{"scripts: [{name: a, path: x.py, launchers: [../sh]}]", `launcher "../sh" must be a command name`},
		{"scripts: [{name: a, path: ../x.py}]", "must be a pattern of a path inside the project"},
		{"scripts: [{name: a, path: x.py, effect: read, key: k, args: [key]}]", `argument name "key"`},
		{"scripts: [{name: a, path: x.py}, {name: a, path: y.py}]", "has the name of a tool or another script"},
		{"scripts: [{name: a, path: x.py, once: true}]", "once applies to a write"},
		{"tools: [{name: t}]\nagent: {command: 'x {shim_path}'}", "{shim_path} needs scripts:"},
		{"scripts: [{path: x.py, real: true, adapter: [python3, a.py]}]", "give real or adapter, not both"},
		{"scripts: [{name: a, path: x.py, adapter: []}]", "adapter must be a command line as a list"},
		{"scripts: [{name: a, path: x.py, adapter: [python3, a.py], stdout: hi}]", "give stdout or adapter, not both"},
		{"scripts: [{name: a, path: x.py, adapter_timeout: 5s}]", "adapter_timeout applies to a script with an adapter"},
		{"scripts: [{name: a, path: x.py, adapter: [a], adapter_timeout: soon}]", "adapter_timeout must be a duration"},
	}
	for _, c := range cases {
		_, err := Parse("p.yaml", []byte("task: t\n"+c.yaml+"\n"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.yaml, err, c.want)
		}
	}
}
