package layout

import (
	"os/exec"
	"strings"
	"testing"
)

// TestTrialKnowsNoTemporal: package trial, one trial from set-up to teardown, imports
// nothing of Temporal, directly or through another package: activities/ is where a
// trial meets Temporal.
func TestTrialKnowsNoTemporal(t *testing.T) {
	root := moduleRoot(t)
	for _, pkg := range []string{"./trial", "./trial/..."} {
		cmd := exec.Command("go", "list", "-deps", "-test", pkg)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		var temporal []string
		for _, p := range strings.Fields(string(out)) {
			if strings.HasPrefix(p, "go.temporal.io/") {
				temporal = append(temporal, p)
			}
		}
		if len(temporal) > 0 {
			t.Errorf("%s depends on Temporal: %s", pkg, strings.Join(temporal, ", "))
		}
	}
}
