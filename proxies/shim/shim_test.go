package shim_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/proxies/shim"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
)

var relay string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "shim-relay-")
	if err != nil {
		panic(err)
	}
	_, file, _, _ := runtime.Caller(0)
	cmd := exec.Command("go", "build", "-o", dir+"/", "./cmd/chaos-relay")
	cmd.Dir = filepath.Join(filepath.Dir(file), "..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build the relay: %v\n%s", err, out)
		os.Exit(1)
	}
	relay = filepath.Join(dir, "chaos-relay")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const portalSpec = `
name: portal
task: book R-101
agent: {command: "true"}
scripts:
  - name: book
    path: scripts/book.py
    effect: write
    once: true
    args: [order]
    key: "shipment/{order}"
    value: "{carrier}"
    stdout: "booked {order} with {carrier}"
  - name: get
    path: "scripts/get*.py"
    effect: read
    args: [order]
    key: "shipment/{order}"
    stdout: "{order}: {value}"
  - name: status
    path: bin/portal-status
    launchers: [portal-status]
    effect: read
    args: [order]
    key: "shipment/{order}"
  - path: "tools/*.py"
    real: true
initial_state: {"shipment/R-100": "UPS"}
workspace: {files: [scripts]}
`

// fixture is a trial's shim on the portal spec under condition cond: the sandbox (a copy
// of the project), the original project, the record's path.
type fixture struct {
	sh                      *shim.Shim
	h                       *hub.Hub
	sandbox, original, path string
	rec                     string
}

func open(t testing.TB, cond string) *fixture {
	t.Helper()
	s, err := spec.Parse("portal.yaml", []byte(portalSpec))
	if err != nil {
		t.Fatal(err)
	}
	conds, err := faults.Generate(s)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := faults.Find(conds, cond)
	if !ok {
		t.Fatalf("no condition %s in %v", cond, faults.IDs(conds))
	}
	dir := t.TempDir()
	f := &fixture{sandbox: filepath.Join(dir, "sandbox"), original: filepath.Join(dir, "original"), rec: filepath.Join(dir, "record.jsonl")}
	for _, d := range []string{f.sandbox, f.original} {
		os.MkdirAll(filepath.Join(d, "scripts"), 0o755)
		os.MkdirAll(filepath.Join(d, "tools"), 0o755)
		// The real scripts would write a canary; the twin answers instead.
		for _, n := range []string{"book.py", "get.py"} {
			os.WriteFile(filepath.Join(d, "scripts", n), []byte("open('"+filepath.Join(dir, "canary")+"', 'w').write('ran')\n"), 0o755)
		}
		os.WriteFile(filepath.Join(d, "tools", "hello.py"), []byte("print('hello from the real tool')\n"), 0o644)
	}
	rec, err := record.Open(f.rec)
	if err != nil {
		t.Fatal(err)
	}
	f.h, err = hub.NewHub(hub.Config{Spec: s, Condition: c, Seed: 1, Trial: "t", Record: rec})
	if err != nil {
		t.Fatal(err)
	}
	f.sh, err = shim.Open(f.h, shim.Config{Scripts: s.Scripts, Sandbox: f.sandbox, Original: f.original, Files: s.Workspace.Files,
		Relay: relay, Parent: dir, Path: os.Getenv("PATH")})
	if err != nil {
		t.Fatal(err)
	}
	f.path = f.sh.PathWith(os.Getenv("PATH"))
	t.Cleanup(func() {
		f.sh.Close()
		f.h.Close("test over")
		if _, err := os.Stat(filepath.Join(dir, "canary")); err == nil {
			t.Errorf("a real script ran")
		}
	})
	return f
}

// sh runs a shell command line in the sandbox with the shim first on PATH.
func (f *fixture) sh_(t testing.TB, line string) (stdout, stderr string, exit int) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", line)
	cmd.Dir = f.sandbox
	cmd.Env = append(os.Environ(), "PATH="+f.path)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return o.String(), e.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), 0
}

func (f *fixture) rows(t testing.TB) []record.Row {
	t.Helper()
	l, err := record.ReadFile(f.rec)
	if err != nil {
		t.Fatal(err)
	}
	var out []record.Row
	for _, r := range l.Rows {
		if r.Transport == shim.Transport {
			out = append(out, r)
		}
	}
	return out
}

func TestShimCalls(t *testing.T) {
	f := open(t, "clean")
	cases := []struct {
		line, stdout, stderr string
		exit                 int
	}{
		{"python3 scripts/book.py R-101 --carrier DHL", "booked R-101 with DHL\n", "", 0},
		{"python3 scripts/get.py R-101", "R-101: DHL\n", "", 0},
		{"cd scripts && python3 -u ./get.py --order=R-100", "R-100: UPS\n", "", 0}, // a flag names an argument; the folder it runs in
		{"python3 scripts/get.py", "", "usage: scripts/get.py: missing argument order\n", 2},
		{"python3 scripts/get.py R-1 R-2", "", "usage: scripts/get.py: unexpected argument \"R-2\"\n", 2},
		{"portal-status R-101", "{\"key\":\"shipment/R-101\",\"value\":\"DHL\"}\n", "", 0}, // a script's own name, no stdout template
		{"python3 tools/hello.py", "hello from the real tool\n", "", 0},                    // real: true
		{"python3 -c 'print(1)'", "", "chaos shim: python3 is blocked in this trial: python3 runs code given on its command line (-c), not a script; nothing was run\n", 1},
		{"python3 scripts/other.py", "", "chaos shim: python3 is blocked in this trial: scripts/other.py is not one of the scripts the twin answers for; nothing was run\n", 1},
		{"python3 ../original/scripts/book.py R-1 --carrier X", "", "chaos shim: python3 is blocked in this trial: ../original/scripts/book.py is outside the project the agent works on; nothing was run\n", 1},
		{"echo plain", "plain\n", "", 0}, // no launcher: runs as it would
	}
	for _, c := range cases {
		t.Run(c.line, func(t *testing.T) {
			out, errOut, code := f.sh_(t, c.line)
			if out != c.stdout || errOut != c.stderr || code != c.exit {
				t.Errorf("got exit %d stdout %q stderr %q\nwant exit %d stdout %q stderr %q", code, out, errOut, c.exit, c.stdout, c.stderr)
			}
		})
	}
	rows := f.rows(t)
	// Every launcher call but the real one is recorded: 3 calls, 2 refused usages, the
	// status call, 3 refusals.
	var calls, rejected int
	for _, r := range rows {
		switch r.Type {
		case record.TypeCall:
			calls++
		case record.TypeRejected:
			rejected++
		}
		if r.Exit == nil || len(r.Argv) == 0 {
			t.Errorf("row %d without argv or exit: %+v", r.Seq, r)
		}
	}
	if calls != 4 || rejected != 5 {
		t.Errorf("%d calls and %d refusals recorded, want 4 and 5: %+v", calls, rejected, rows)
	}
	if r := rows[0]; r.Tool != "book" || r.State["shipment/R-101"] != "DHL" || r.Stdout != "booked R-101 with DHL\n" || strings.Join(r.Argv, " ") != "python3 scripts/book.py R-101 --carrier DHL" {
		t.Errorf("the booking's row: %+v", r)
	}
}

// TestShimFaults: what each family does to a script's caller.
func TestShimFaults(t *testing.T) {
	cases := []struct {
		cond, line string
		stdout     string
		exitCode   int
		stderrHas  string
	}{
		{"phantom_success@book", "python3 scripts/book.py R-1 --carrier DHL; python3 scripts/get.py R-1", "booked R-1 with DHL\nR-1: \n", 0, ""},
		{"phantom_failure@book", "python3 scripts/book.py R-1 --carrier DHL; python3 scripts/get.py R-1", "R-1: DHL\n", 0, "error: 503 Service Unavailable: the write could not be completed"},
		{"session_drop@book", "python3 scripts/book.py R-1 --carrier A; python3 scripts/book.py R-2 --carrier B", "booked R-1 with A\n", 1, "error: session expired, log in again (401 Unauthorized"},
		{"premature_read@get", "python3 scripts/get.py R-100", "R-100: \n", 0, ""},
		{"truncated_reply@get", "python3 scripts/get.py R-100", "{\"key\":\"shipment/R-", 0, ""},
	}
	for _, c := range cases {
		t.Run(c.cond, func(t *testing.T) {
			f := open(t, c.cond)
			out, errOut, code := f.sh_(t, c.line)
			if !strings.HasPrefix(out, c.stdout) || code != c.exitCode || !strings.Contains(errOut, c.stderrHas) {
				t.Errorf("got exit %d stdout %q stderr %q; want exit %d, stdout from %q, stderr with %q", code, out, errOut, c.exitCode, c.stdout, c.stderrHas)
			}
		})
	}
}

// TestShimOutside: a change to the original project is found, recorded once, and a
// launcher whose hub is gone fails closed.
func TestShimOutside(t *testing.T) {
	f := open(t, "clean")
	if got := f.sh.Outside(); len(got) != 0 {
		t.Fatalf("before any change: %q", got)
	}
	os.WriteFile(filepath.Join(f.sandbox, "scripts", "new.py"), []byte("x"), 0o644) // the copy: fine
	os.WriteFile(filepath.Join(f.original, "scripts", "book.py"), []byte("changed"), 0o644)
	os.WriteFile(filepath.Join(f.original, "scripts", "extra.py"), []byte("x"), 0o644)
	os.Remove(filepath.Join(f.original, "scripts", "get.py"))
	got := f.sh.Outside()
	f.sh.Outside()
	want := []string{"outside: scripts/book.py was changed", "outside: scripts/extra.py was created", "outside: scripts/get.py was removed"}
	if len(got) != len(want) {
		t.Fatalf("outside: %q, want %q", got, want)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("outside[%d] = %q, want %q...", i, got[i], want[i])
		}
	}
	n := 0
	for _, r := range f.rows(t) {
		if r.Type == record.TypeOutside {
			n++
		}
	}
	if n != 3 {
		t.Errorf("%d outside rows, want 3 (each change once)", n)
	}
	// The hub gone (its socket removed): the launcher runs nothing.
	launcher := filepath.Join(f.sh.Bin, "python3")
	os.Remove(f.sh.Socket)
	cmd := exec.Command(launcher, "scripts/book.py", "R-1", "--carrier", "X")
	cmd.Dir = f.sandbox
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "nothing was run") {
		t.Errorf("a launcher without its hub: %v %s; want exit 1, nothing run", err, out)
	}
}

// BenchmarkShimCall is the time a shimmed call adds: the same read run directly (python3
// running a script that prints its line) and through the shim (sh, the relay, the hub,
// the world), alternated in the same run; it reports both per call and their ratio.
func BenchmarkShimCall(b *testing.B) {
	f := open(b, "clean")
	_, file, _, _ := runtime.Caller(0)
	direct := filepath.Join(filepath.Dir(file), "testdata", "echo_status.py")
	// The interpreter itself, not a version manager's wrapper on PATH (pyenv's takes
	// seconds), so that direct is the script's own cost.
	exe, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		b.Fatal(err)
	}
	python := strings.TrimSpace(string(exe))
	launcher := filepath.Join(f.sh.Bin, "python3")
	run := func(prog string, args ...string) {
		cmd := exec.Command(prog, args...)
		cmd.Dir = f.sandbox
		if out, err := cmd.Output(); err != nil || !strings.HasPrefix(string(out), "R-100") {
			b.Fatalf("%s %v: %v %q", prog, args, err, out)
		}
	}
	directMs, shimMs := shim.InTurn(b, "direct", func() { run(python, direct, "R-100") }, "shim", func() { run(launcher, "scripts/get.py", "R-100") })
	b.ReportMetric(shimMs-directMs, "shim-minus-direct-ms/call")
}
