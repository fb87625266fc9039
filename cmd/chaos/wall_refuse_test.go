package main

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/tests/testkit"
)

// TestWallBadInput: what the user got wrong is exit code 1 with a sentence on it.
func TestWallBadInput(t *testing.T) {
	busy := testkit.BusyAddr(t)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"neither", []string{"wall"}, "give either --hub URL"},
		{"both", []string{"wall", "--hub", "http://127.0.0.1:1", "--spec", exampleSpec}, "give either --hub URL"},
		{"unknown condition", []string{"wall", "--spec", exampleSpec, "--condition", "phantom_success@read_email"}, `unknown condition "phantom_success@read_email" for support-ticket (see chaos faults ` + exampleSpec + `)`},
		{"missing spec", []string{"wall", "--spec", "nope.yaml"}, "nope.yaml"},
		{"unknown flag", []string{"wall", "--spec", exampleSpec, "--conditon", "clean"}, "unknown flag: --conditon (did you mean --condition?)"},
		{"unknown flag, no near one", []string{"wall", "--spec", exampleSpec, "--zzzzzz"}, "unknown flag: --zzzzzz"},
		{"listen on every interface", []string{"wall", "--spec", exampleSpec, "--listen", "0.0.0.0:0"}, `wall: listen on "0.0.0.0:0": not a loopback address: use 127.0.0.1:PORT, or pass --allow-remote with a bearer token in $CHAOS_WALL_TOKEN`},
		{"listen on every interface, v6", []string{"wall", "--spec", exampleSpec, "--listen", "[::]:0"}, "not a loopback address"},
		{"listen on a name", []string{"wall", "--spec", exampleSpec, "--listen", "example.com:8080"}, "not a loopback address"},
		{"allow-remote without a token", []string{"wall", "--spec", exampleSpec, "--listen", "0.0.0.0:0", "--allow-remote"}, "--allow-remote needs a bearer token of at least 16 characters in $CHAOS_WALL_TOKEN"},
		{"allow-remote without listen", []string{"wall", "--spec", exampleSpec, "--allow-remote"}, "--allow-remote goes with --listen ADDR"},
		{"listen on a bad address", []string{"wall", "--spec", exampleSpec, "--listen", "127.0.0.1:notaport"}, "127.0.0.1:notaport"},
		{"listen on a port in use", []string{"wall", "--spec", exampleSpec, "--listen", busy}, "address already in use"},
	}
	t.Setenv(WallTokenEnv, "")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := chaosCmd(t, c.args...)
			if code := ExitCode(err); code != ExitBadInput || !strings.Contains(err.Error(), c.want) {
				t.Errorf("exit %d, error %v; want %d and %q", code, err, ExitBadInput, c.want)
			}
		})
	}
}

// TestWallAllowRemote: with --allow-remote and the token in the environment, every
// request must carry the token (served on loopback here: tests stay off the network).
func TestWallAllowRemote(t *testing.T) {
	const token = "a-token-of-at-least-16"
	env := func(k string) string {
		if k == WallTokenEnv {
			return token
		}
		return ""
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	w := startWall(t, ctx, &WallOptions{Spec: exampleSpec, Condition: faults.CleanID, Listen: "127.0.0.1:0", AllowRemote: true, Getenv: env})
	line, err := w.stderr.ReadString('\n')
	m := listenLine.FindStringSubmatch(line)
	if err != nil || m == nil {
		t.Fatalf("stderr line %q (%v), want the URLs", line, err)
	}
	for _, c := range []struct {
		auth string
		want int
	}{{"", 401}, {"Bearer wrong-token-wrong-token", 401}, {"Bearer " + token, 200}} {
		req, _ := http.NewRequest("POST", m[2]+"/tools/read_email", strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("Authorization %q: %s, want %d", c.auth, resp.Status, c.want)
		}
	}
	stop() // with --listen a closed stdin leaves HTTP serving: a signal ends the wall
	if err := w.wait(t); err != nil {
		t.Fatal(err)
	}
}

// TestFlagSuggestion: a mistyped flag of any command gets the near one.
func TestFlagSuggestion(t *testing.T) {
	_, err := chaosCmd(t, "run", exampleSpec, "--rep", "3", "--dry-run")
	if code := ExitCode(err); code != ExitBadInput || err == nil || !strings.HasSuffix(err.Error(), "unknown flag: --rep (did you mean --reps?)") {
		t.Errorf("chaos run --rep: exit %d, %v; want %d ending \"unknown flag: --rep (did you mean --reps?)\"", code, err, ExitBadInput)
	}
}
