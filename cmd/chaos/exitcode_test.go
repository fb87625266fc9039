package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/crashwall/chaos/tests/testkit"
)

// TestPortInUse: a port that is taken is the user's to fix, so every command that listens
// where it is told exits 1 for it, with the address in the message.
func TestPortInUse(t *testing.T) {
	busy := testkit.BusyAddr(t)
	_, port, _ := strings.Cut(busy, ":")
	script := "../../proxies/llm/testdata/support-ticket.script.yaml"
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"chaos wall --listen", []string{"wall", "--spec", exampleSpec, "--listen", busy}, busy},
		{"chaos model standin --listen", []string{"model", "standin", "--script", script, "--listen", busy}, busy},
		{"chaos server --port", []string{"server", "--data-dir", t.TempDir(), "--port", port, "--ui-port", "-1"}, "port " + port},
		{"chaos server --ui-port", []string{"server", "--data-dir", t.TempDir(), "--port", "0", "--ui-port", port}, "port " + port},
	}
	if _, err := strconv.Atoi(port); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := chaosCmd(t, c.args...)
			if code := ExitCode(err); code != ExitBadInput || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "in use") {
				t.Errorf("exit %d, error %v; want %d naming %s in use", code, err, ExitBadInput, c.want)
			}
		})
	}
}
