//go:build unix

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary stand in for an agent: with RELAY_TEST_GET set it fetches
// that URL and prints the body, as an agent in a container fetches {wall_url}. With
// RELAY_TEST_MAIN set it is the relay itself, `chaos-relay RELAY_TEST_MAIN`.
func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv("RELAY_TEST_SERVE"); ok {
		// `chaos-relay serve ARGS` (serveChild): a process of its own, since serve reaps
		// every child of its process, as the first process of a container must, and
		// would reap the other tests' children here.
		os.Unsetenv("RELAY_TEST_SERVE")
		os.Exit(serve(strings.Split(args, "\x1f"), os.Stderr))
	}
	if sock := os.Getenv("RELAY_TEST_MAIN"); sock != "" {
		os.Args = []string{"chaos-relay", sock}
		main()
	}
	if url := os.Getenv("RELAY_TEST_GET"); url != "" {
		r, err := http.Get(url)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		b, _ := io.ReadAll(r.Body)
		if r.StatusCode != 200 || string(b) != "hub answered /tools/read_email" {
			fmt.Fprintf(os.Stderr, "%d %s\n", r.StatusCode, b)
			os.Exit(4)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// unixHTTP serves a handler that answers its path on a unix socket, as the hub's HTTP
// server does for a container; it returns the socket's path.
func unixHTTP(t *testing.T) string {
	t.Helper()
	sock, ln := unixListener(t)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "hub answered %s", r.URL.Path) })}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return sock
}

// unixListener listens on a unix socket in a short temporary path (a socket's path is
// limited to about 100 bytes) and closes it at the end of the test.
func unixListener(t *testing.T) (string, net.Listener) {
	t.Helper()
	dir, err := os.MkdirTemp("", "relay-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "http")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return sock, ln
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// serveChild runs `chaos-relay serve args` as a process of its own (this test binary)
// and returns its exit code and what it wrote on stderr.
func serveChild(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(append(os.Environ(), env...), "RELAY_TEST_SERVE="+strings.Join(args, "\x1f"))
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	err = cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), errOut.String()
}

func TestServe(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Run("forwards the loopback to the hub's socket and ends as the command ends", func(t *testing.T) {
		sock := unixHTTP(t)
		addr := freePort(t)
		code, errOut := serveChild(t, []string{"RELAY_TEST_GET=http://" + addr + "/tools/read_email"}, "--tcp", addr+"="+sock, "--", self)
		if code != 0 {
			t.Fatalf("exit %d, want the agent's 0: %s", code, errOut)
		}
	})
	t.Run("the command's exit code and signal", func(t *testing.T) {
		if code, _ := serveChild(t, nil, "--", "sh", "-c", "exit 7"); code != 7 {
			t.Errorf("exit %d, want 7", code)
		}
		if code, _ := serveChild(t, nil, "--", "sh", "-c", "kill -TERM $$"); code != 128+15 {
			t.Errorf("exit %d, want 143", code)
		}
	})
	t.Run("the hub gone ends the agent", func(t *testing.T) {
		// The relay's watch finds the hub there once; then the worker dies: its socket refuses.
		sock, ln := unixListener(t)
		go func() {
			if c, err := ln.Accept(); err == nil {
				c.Close()
			}
			ln.Close()
		}()
		start := time.Now()
		code, errOut := serveChild(t, nil, "--watch", sock, "--", "sleep", "300")
		if code != 128+9 || !strings.Contains(errOut, "the trial's hub is gone") {
			t.Errorf("exit %d after %s, want 137 and a message: %q", code, time.Since(start), errOut)
		}
	})
	t.Run("bad command lines", func(t *testing.T) {
		for _, args := range [][]string{{}, {"--tcp", "0.0.0.0:7070=/s", "--", "true"}, {"--tcp", "127.0.0.1:7070", "--", "true"}, {"--tcp", "127.0.0.1:7070=/s"}, {"--bogus"}} {
			var errOut bytes.Buffer
			if code := serve(args, &errOut); code != 1 || errOut.Len() == 0 {
				t.Errorf("serve %q: exit %d, %q; want 1 and a message", args, code, errOut.String())
			}
		}
	})
}
