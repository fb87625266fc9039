package testkit

import (
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/tests/chaosbin"
)

// ExampleSpec is the path of the shipped example spec, examples/support-ticket.yaml.
func ExampleSpec() string { return filepath.Join(chaosbin.Root(), "examples", "support-ticket.yaml") }

// ExampleHub is a hub of the example spec under its clean condition, as a trial's
// StartHub makes one, recording to record.jsonl in a folder of the test's; the test's
// cleanup closes it (closing it before is allowed). It returns the record's path.
func ExampleHub(tb testing.TB, trial string) (*hub.Hub, string) {
	tb.Helper()
	s, err := spec.Load(ExampleSpec())
	if err != nil {
		tb.Fatal(err)
	}
	conds, err := faults.Generate(s)
	if err != nil {
		tb.Fatal(err)
	}
	clean, _ := faults.Find(conds, faults.CleanID)
	path := filepath.Join(tb.TempDir(), "record.jsonl")
	rec, err := record.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	h, err := hub.NewHub(hub.Config{Spec: s, Condition: clean, Seed: s.Seed, Trial: trial, Record: rec})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { h.Close("test over") })
	return h, path
}

// BusyAddr is a loopback address another listener holds until the test ends.
func BusyAddr(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	return ln.Addr().String()
}

// StartPiped starts cmd with pipes to its stdin and from its stdout (its stderr is left as
// the caller set it), for a test that speaks a protocol to it a line at a time.
func StartPiped(tb testing.TB, cmd *exec.Cmd) (stdin io.WriteCloser, stdout io.ReadCloser) {
	tb.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if stdout, err = cmd.StdoutPipe(); err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", strings.Join(cmd.Args, " "), err)
	}
	return stdin, stdout
}
