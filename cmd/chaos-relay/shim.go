//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// lookupPrefix is proxies/shim's LookupPrefix (the relay imports no chaos package): REAL
// is then the launchers' folder, and the program is found on PATH past it.
const lookupPrefix = "lookup:"

// lookPath is name's program on PATH, skipping the launchers' folder skip.
func lookPath(name, skip string) string {
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if dir == "" || !filepath.IsAbs(dir) || filepath.Clean(dir) == filepath.Clean(skip) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// shim is a launcher of the trial's shim (proxies/shim): `chaos-relay shim SOCKET NAME
// REAL ARGS...`, run by the launcher NAME put first on the agent's PATH. It sends the
// call to the hub at SOCKET and either prints what the twin answered and exits with its
// code, or, when the spec allows the call, becomes the real program REAL. A hub that
// cannot be reached fails closed: nothing runs, exit 1.
func shim(args []string, stdout, stderr io.Writer) int {
	if len(args) < 3 {
		fmt.Fprintln(stderr, "usage: chaos-relay shim SOCKET NAME REAL [ARGS...]  (a launcher of a chaos trial's shim)")
		return 2
	}
	sock, name, real, rest := args[0], args[1], args[2], args[3:]
	cwd, _ := os.Getwd()
	conn, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		fmt.Fprintf(stderr, "chaos shim: %s: the trial's hub cannot be reached (%v); nothing was run\n", name, err)
		return 1
	}
	defer conn.Close()
	req, _ := json.Marshal(struct {
		Launcher string   `json:"launcher"`
		Args     []string `json:"args"`
		Cwd      string   `json:"cwd"`
	}{name, append([]string{}, rest...), cwd})
	if _, err := conn.Write(append(req, '\n')); err != nil {
		fmt.Fprintf(stderr, "chaos shim: %s: the trial's hub cannot be reached (%v); nothing was run\n", name, err)
		return 1
	}
	var resp struct {
		Run    bool   `json:"run"`
		Exit   int    `json:"exit"`
		Stdout string `json:"stdout"`
		Stderr string `json:"stderr"`
	}
	line, err := bufio.NewReader(conn).ReadBytes('\n')
	if err != nil || json.Unmarshal(line, &resp) != nil {
		fmt.Fprintf(stderr, "chaos shim: %s: no answer from the trial's hub; nothing was run\n", name)
		return 1
	}
	if resp.Run {
		if skip, ok := strings.CutPrefix(real, lookupPrefix); ok {
			real = lookPath(name, skip)
		}
		if real == "" {
			fmt.Fprintf(stderr, "chaos shim: %s: not found on PATH\n", name)
			return 127
		}
		conn.Close()
		err := syscall.Exec(real, append([]string{name}, rest...), os.Environ())
		fmt.Fprintf(stderr, "chaos shim: %s: %v\n", real, err)
		return 126
	}
	io.WriteString(stdout, resp.Stdout)
	io.WriteString(stderr, resp.Stderr)
	return resp.Exit
}
