package manual

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestManualRun: set up, start, end and results, without a proxy in between: the entry
// names the proxy, the deck deals its first fault, a run that saw no call is
// not_triggered, and results counts it; every mistake of the user's is an InputError.
func TestManualRun(t *testing.T) {
	var out bytes.Buffer
	m := &Mode{DataDir: t.TempDir(), Out: &out, Shuffle: func([]string) {}}
	isInput := func(err error) bool {
		var ie *InputError
		return errors.As(err, &ie) && ie.BadInput()
	}
	for _, err := range []error{
		m.Setup("", []string{"srv"}, "/bin/chaos"),
		m.Setup("a b", []string{"srv"}, "/bin/chaos"),
		m.Setup("mem", nil, "/bin/chaos"),
		m.Start(""), // nothing set up yet
		m.End("done", ""),
	} {
		if !isInput(err) {
			t.Errorf("error %v; want an InputError", err)
		}
	}

	out.Reset()
	if err := m.Setup("mem", []string{"npx", "server-memory"}, "/bin/chaos"); err != nil {
		t.Fatal(err)
	}
	_, entry, _ := strings.Cut(out.String(), "\n\n")
	entry, _, _ = strings.Cut(entry, "\n\n")
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(entry), &cfg); err != nil {
		t.Fatalf("the entry is not JSON: %v\n%s", err, out.String())
	}
	if e := cfg.MCPServers["mem"]; e.Command != "/bin/chaos" || strings.Join(e.Args, " ") != "proxy serve --name mem --data-dir "+m.DataDir {
		t.Errorf("entry %+v", e)
	}

	if err := m.Start(""); err != nil {
		t.Fatal(err)
	}
	if err := m.Start("mem"); !isInput(err) || !strings.Contains(err.Error(), "a run on mem is already open") {
		t.Errorf("a second start: %v", err)
	}
	if err := m.End("maybe", ""); !isInput(err) {
		t.Errorf("--said maybe: %v", err)
	}
	out.Reset()
	if err := m.End("done", ""); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{": 0 calls\n", "The fault: phantom_success: " + what("phantom_success"), "Verdict: not_triggered"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("end printed\n%s\nwant %q", out.String(), want)
		}
	}
	if _, err := os.Stat(filepath.Join(m.DataDir, "proxy", "current.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the run is still open after end: %v", err)
	}

	out.Reset()
	if err := m.Results(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "phantom_success  1     done 1      not_triggered 1") ||
		!strings.Contains(out.String(), "Not run yet: "+strings.Join(Families[1:], ", ")) {
		t.Errorf("results:\n%s", out.String())
	}
}
