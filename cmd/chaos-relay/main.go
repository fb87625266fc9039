// Command chaos-relay is the {wall} of a trial: the MCP server command an agent starts. It
// connects its stdin/stdout to the trial's hub, which serves MCP as a stream (one JSON-RPC
// message a line) on a unix socket in the trial's private folder. On a unix system it
// hands the hub the descriptors themselves (SCM_RIGHTS), so the agent's pipes reach the
// hub with no process between, and then only waits:
//
//	chaos-relay ──"\x00chaos-relay fds 1\n", fds 0 and 1 (SCM_RIGHTS)──> hub
//	            <──"y"─────────────────────────────────────────────────── (the socket then only says the relay lives)
//	agent ══its own stdin and stdout pipes════════════════════════════> hub (guard, MCP server, Hub.Call, record)
//
// Where the hub does not take them ("n": not a pipe or socket, a socket that drops the
// descriptors; or no unix system), it moves bytes, unchanged, as it did before:
//
//	agent ──stdin──> chaos-relay ──unix socket──> hub
//	agent <─stdout── chaos-relay <──────────────┘
//
// The hub keeps the world, the fault and the record; the relay decides nothing, so it
// imports only the standard library and starts in a millisecond or two, where
// `chaos wall --hub` (the fallback, docs/ARCHITECTURE.md) is the whole chaos binary.
//
// `chaos-relay shim` is a launcher of the trial's shim (shim.go, proxies/shim): a call of
// a project's script answered by the twin.
//
// `chaos-relay serve` is the first process of an agent's container (serve.go): it carries
// the container's loopback {wall_url} and {llm_url} to the hub's HTTP socket.
//
// `chaos-relay reap [--parent PID] -- COMMAND...` is what the worker runs an agent under
// (package reap, Linux): nothing the agent starts outlives it or the worker. The same as
// `chaos reap`, without loading and initializing the much larger chaos binary each trial
// (the figures: docs/ARCHITECTURE.md).
//
// It ends when the hub closes the stream (the trial is over) or, after the agent closes
// its stdin, when the hub has answered and closed its side; either way with the hub's
// session, handed over or copied.
package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"strings"

	"github.com/crashwall/chaos/reap"
)

const usage = "usage: chaos-relay SOCKET  (the {wall} of a chaos trial: connects MCP on stdin/stdout to the trial's hub at the unix socket SOCKET)"

func main() {
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		// An agent's container: serve.go.
		os.Exit(serve(os.Args[2:], os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == "reap" {
		os.Exit(reap.Main(os.Args[2:], "chaos-relay reap"))
	}
	if len(os.Args) > 1 && os.Args[1] == "shim" {
		// A launcher of the trial's shim: shim.go.
		os.Exit(shim(os.Args[2:], os.Stdout, os.Stderr))
	}
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// handshake is the relay's first message when it hands its stdin and stdout to the hub,
// alone and with the two descriptors (proxies/stdio's RelayHandshake). Its NUL can start
// no JSON-RPC line, so a hub reads it as nothing else.
const handshake = "\x00chaos-relay fds 1\n"

// handOff is what became of the relay's stdio after the handshake.
type handOff int

const (
	notHanded handOff = iota // the relay copies bytes between its stdio and the hub
	handed                   // the hub serves the agent's pipes itself
	hubGone                  // the hub closed the connection before it answered
)

// run connects in and out to the hub's socket named by args and returns the exit code: 0
// when the stream ended, 1 for a bad command line or a hub that is not there. Where it
// can (in and out are the process's own pipes or sockets, on a unix system), it hands
// them to the hub and only waits; else it copies bytes both ways.
func run(args []string, in io.Reader, out io.Writer, errOut io.Writer) int {
	if len(args) != 1 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(errOut, usage)
		return 1
	}
	conn, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: args[0], Net: "unix"})
	if err != nil {
		fmt.Fprintf(errOut, "chaos-relay: cannot reach the trial's hub at %s: %v (the trial has ended, or this is not a hub's socket)\n", args[0], err)
		return 1
	}
	defer conn.Close()
	switch handOver(conn, in, out) {
	case handed:
		// The agent talks to the hub. The connection now only says the relay is alive:
		// the hub ends the session when it ends (the relay was killed), and closes it when
		// the session is over (the agent closed its stdin, or the trial ended).
		io.Copy(io.Discard, conn)
		return 0
	case hubGone:
		return 0
	}
	hubDone := make(chan struct{})
	go func() {
		defer close(hubDone)
		io.Copy(out, conn) // the hub's answers, as they come
	}()
	go func() {
		io.Copy(conn, in)
		// The agent closed its stdin: say so to the hub (half-close), which answers what it
		// was asked, then ends the session and closes its side.
		conn.CloseWrite()
	}()
	// The hub closing its side ends the relay even while the agent still holds stdin open:
	// the trial is over and nothing would answer.
	<-hubDone
	return 0
}
