package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

var (
	// repoRoot is the module's root, two levels up from this package.
	repoRoot string
	// chaosBin is the chaos binary TestMain built for this run.
	chaosBin string
	// exampleSpec is the spec every test here serves.
	exampleSpec string
)

// TestMain builds the binary once, into a temporary folder removed afterwards.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	if repoRoot, err = filepath.Abs("../.."); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	exampleSpec = filepath.Join(repoRoot, "examples", "support-ticket.yaml")
	dir, err := os.MkdirTemp("", "chaos-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	chaosBin = filepath.Join(dir, "chaos")
	build := exec.Command("go", "build", "-o", chaosBin, "./cmd/chaos")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: go build ./cmd/chaos: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}
