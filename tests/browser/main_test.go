package browser

import (
	"os"
	"testing"

	"github.com/crashwall/chaos/tests/testkit"
)

// chaosBin is the chaos binary TestMain built for this run.
var chaosBin string

// TestMain builds the chaos binary once, into a temporary folder removed afterwards.
func TestMain(m *testing.M) {
	os.Exit(testkit.Main(m, "tests/browser", func(bin string) { chaosBin = bin }))
}
