package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/crashwall/chaos/tests/chaosbin"
	"github.com/crashwall/chaos/tests/testkit"
)

var (
	// repoRoot is the module's root, two levels up from this package.
	repoRoot = chaosbin.Root()
	// chaosBin is the chaos binary TestMain built for this run.
	chaosBin string
	// exampleSpec is the spec every test here serves.
	exampleSpec = filepath.Join(repoRoot, "examples", "support-ticket.yaml")
)

// TestMain builds the binary once, into a temporary folder removed afterwards.
func TestMain(m *testing.M) {
	os.Exit(testkit.Main(m, "tests/e2e", func(bin string) { chaosBin = bin }))
}
