package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// echoTwice is a family that exists only in this test: it answers a write's second call
// with the reply of the first, storing nothing. It is everything a new family is: a
// Family and its Entry, registered.
type echoTwice struct{}

func (echoTwice) Hits(c faults.Condition, pos faults.Position) bool {
	return pos.Tool == c.Tool && pos.Call == 2
}

func (echoTwice) Apply(context.Context, faults.Condition, int64, faults.Request, faults.World) faults.Outcome {
	return faults.Outcome{Reply: world.OK(`{"ok": true}`), How: "answered as the first call, not stored"}
}

var echoTwiceEntry = faults.Entry{
	Name: "echo_twice", Rank: 1000, Family: echoTwice{},
	Eligible: "tools that write", Needs: spec.EffectWrite,
	Variants: func(_ *spec.Spec, t spec.Tool) []string {
		if t.Effect == spec.EffectWrite {
			return []string{""}
		}
		return nil
	},
	Describe: func(_ *spec.Spec, t spec.Tool, c *faults.Condition) faults.Info {
		c.SuccessPossible = true
		c.What = "the 2nd call to " + c.Tool + ": answered as the first, nothing stored"
		return faults.Info{Hits: "the 2nd call to " + c.Tool, Receives: `{"ok": true}`, World: "unchanged by the 2nd write"}
	},
	Success: []faults.SuccessRule{{Fault: "echo_twice", Impossible: "never: the agent can read back and write again",
		Lost: func(*spec.Spec, spec.Tool, *faults.Condition) bool { return false }}},
}

const echoSpec = `name: echo
task: save the note
agent: {command: "run {task}"}
tools:
  - {name: save_note, effect: write}
  - {name: read_note, effect: read}
faults: [echo_twice, stale_read]
`

// TestFaultsNewFamily: a family registered from one place (here, a test) is known to the
// spec loader, generated, described and listed by chaos faults, and decided by
// faults.Decide; once removed, the same spec is refused with its file:line.
func TestFaultsNewFamily(t *testing.T) {
	path := filepath.Join(t.TempDir(), "echo.yaml")
	if err := os.WriteFile(path, []byte(echoSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	faults.Register(echoTwiceEntry)
	t.Cleanup(func() { faults.Unregister("echo_twice") })

	var out bytes.Buffer
	if err := faultsRun(&FaultsOptions{IO: &IOStreams{Out: &out, ErrOut: &out}, Spec: path}); err != nil {
		t.Fatalf("chaos faults: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		"echo: 3 conditions (clean and 2 faults) over 2 tools",
		"echo_twice@save_note  yes               the 2nd call to save_note: answered as the first, nothing stored",
		"stale_read@read_note",
		"Not applicable to this spec: phantom_success (not asked for: faults: [echo_twice, stale_read]);",
		"Ajantik would not generate: echo_twice@save_note, stale_read@read_note",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("chaos faults does not print %q:\n%s", want, out.String())
		}
	}

	s, err := spec.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	conds, err := faults.Generate(s)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := faults.Find(conds, "echo_twice@save_note")
	if !ok {
		t.Fatalf("no condition echo_twice@save_note in %v", faults.IDs(conds))
	}
	for call, want := range map[int]bool{1: false, 2: true, 3: false} {
		if got := faults.Decide(1, c, faults.Position{Tool: "save_note", Write: true, Call: call, Target: call}); got != want {
			t.Errorf("Decide on call %d = %v, want %v", call, got, want)
		}
	}
	if !strings.Contains(faults.SuccessTable(), "| `echo_twice` | never: the agent can read back and write again |") {
		t.Errorf("the success table has no row for echo_twice:\n%s", faults.SuccessTable())
	}

	bad := strings.Replace(echoSpec, "{name: save_note, effect: write}", "{name: save_note, effect: none}", 1)
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := spec.Load(path); err == nil || !strings.Contains(err.Error(), `echo.yaml:7: fault family "echo_twice" applies to no tool: it needs a tool with effect: write`) {
		t.Errorf("a spec with no tool the family needs: %v, want it refused at line 7", err)
	}

	faults.Unregister("echo_twice")
	if err := os.WriteFile(path, []byte(echoSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := spec.Load(path); err == nil || !strings.Contains(err.Error(), `echo.yaml:7: unknown fault family "echo_twice"`) {
		t.Errorf("with the family gone, loading the spec: %v, want unknown fault family at line 7", err)
	}
}
