package testkit

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// EditedFile is the text of the file at path with each pair of edits (old, new) made
// once; an old text the file does not hold fails the test, so that a change of the file
// cannot leave a test running something other than it says.
func EditedFile(t testing.TB, path string, edits ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for i := 0; i+1 < len(edits); i += 2 {
		if !strings.Contains(s, edits[i]) {
			t.Fatalf("%s has no %q to replace", path, edits[i])
		}
		s = strings.Replace(s, edits[i], edits[i+1], 1)
	}
	return []byte(s)
}

// WaitForPID waits (a minute at most) for a process to write its pid to the file at path.
func WaitForPID(t testing.TB, path string) int {
	t.Helper()
	pid := 0
	WaitFor(t, time.Minute, "a pid in "+path, func() bool {
		b, err := os.ReadFile(path)
		n, perr := strconv.Atoi(strings.TrimSpace(string(b)))
		if err == nil && perr == nil && n > 0 {
			pid = n
			return true
		}
		return false
	})
	return pid
}
