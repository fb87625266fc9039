package e2e

import (
	"github.com/crashwall/chaos/tests/chaosbin"

	"fmt"
	"os"
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
	repoRoot = chaosbin.Root()
	exampleSpec = filepath.Join(repoRoot, "examples", "support-ticket.yaml")
	bin, cleanup, err := chaosbin.Build()
	if err != nil {
		fmt.Fprintln(os.Stderr, "tests/e2e:", err)
		return 1
	}
	defer cleanup()
	chaosBin = bin
	return m.Run()
}
