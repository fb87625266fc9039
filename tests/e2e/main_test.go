package e2e

import (
	"fmt"
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
	if bin := os.Getenv(hubProcessEnv); bin != "" {
		// A benchmark's hub process (hubproc_test.go), not a test run.
		if err := serveHubProcess(bin, os.TempDir()); err != nil {
			fmt.Fprintln(os.Stderr, "hub process:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(testkit.Main(m, "tests/e2e", func(bin string) { chaosBin = bin }))
}
