// Package chaosbin builds the chaos binary for the test packages that run it as a user
// would (tests/e2e, run, verdicts, model, upstream, store): one way to build it, one
// place that knows where the module is.
package chaosbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// Root is the module's root folder.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Build builds ./cmd/chaos, and beside it the relay trials start as {wall}
// (./cmd/chaos-relay, found next to chaos as an install puts it), into a fresh temporary
// folder and returns chaos's path and a function that removes the folder. The error
// carries the compiler's output. The folder's name holds a space, as "Application Support" does: every test that runs the
// binary also shows that nothing splits its path on spaces.
func Build() (bin string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "chaos bin-")
	if err != nil {
		return "", nil, err
	}
	bin = filepath.Join(dir, "chaos")
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "./cmd/chaos")
	cmd.Dir = Root()
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("go build ./cmd/chaos: %v\n%s", err, out)
	}
	// The relay static, as make build makes it: it starts in an agent's container too.
	cmd = exec.Command("go", "build", "-o", dir+string(filepath.Separator), "./cmd/chaos-relay")
	cmd.Dir = Root()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("CGO_ENABLED=0 go build ./cmd/chaos-relay: %v\n%s", err, out)
	}
	return bin, func() { os.RemoveAll(dir) }, nil
}
