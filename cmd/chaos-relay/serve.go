//go:build unix

package main

// The relay's second mode is the first process of an agent's container (agent.runtime:
// docker). The container has no network: only its own loopback, on which the relay
// listens, and the hub's unix sockets, mounted from the host:
//
//	container (--network none)                      │ host (the worker)
//	agent ──TCP 127.0.0.1:PORT──> chaos-relay serve ══unix socket══> hub's HTTP server ({wall_url}, {llm_url} = /llm)
//	agent ──stdio──> chaos-relay SOCKET ═══════════════unix socket══> hub's MCP stream ({wall})
//
// It listens first, then runs the agent's command as its child (in a process group of
// its own), passes on SIGTERM, SIGINT and SIGHUP, reaps every orphan (it is PID 1), and
// ends as the command ended. When the hub goes away (the worker died: its socket refuses
// connections) it kills the agent at once, so the container ends and is removed.

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
)

const serveUsage = "usage: chaos-relay serve [--tcp 127.0.0.1:PORT=SOCKET]... [--watch SOCKET] -- COMMAND [ARG]...  (the first process of an agent's container)"

// watchEvery is how often serve checks that the hub is still there.
const watchEvery = 500 * time.Millisecond

// forward is one TCP address on the container's loopback and the hub socket it leads to.
type forward struct{ addr, socket string }

func serve(args []string, errOut io.Writer) int {
	var fwds []forward
	var watch string
	var argv []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--":
			argv = args[i+1:]
			i = len(args)
		case (a == "--tcp" || a == "--watch") && i+1 < len(args):
			i++
			if a == "--watch" {
				watch = args[i]
				continue
			}
			addr, sock, ok := strings.Cut(args[i], "=")
			host, _, err := net.SplitHostPort(addr)
			if !ok || err != nil || sock == "" || !isLoopbackHost(host) {
				fmt.Fprintf(errOut, "chaos-relay serve: --tcp %q: give LOOPBACK_ADDRESS:PORT=SOCKET, such as 127.0.0.1:7070=/chaos/hub/http\n", args[i])
				return 1
			}
			fwds = append(fwds, forward{addr, sock})
		default:
			fmt.Fprintln(errOut, serveUsage)
			return 1
		}
	}
	if len(argv) == 0 {
		fmt.Fprintln(errOut, serveUsage)
		return 1
	}
	// Caught before anything starts, so none is lost; a caught signal is reset for the
	// child by exec.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)

	for _, f := range fwds {
		ln, err := net.Listen("tcp", f.addr)
		if err != nil {
			fmt.Fprintf(errOut, "chaos-relay serve: listen on %s: %v\n", f.addr, err)
			return 1
		}
		go accept(ln, f.socket)
	}

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(errOut, "chaos-relay serve: %v\n", err)
		return 127
	}
	pid := cmd.Process.Pid
	exited := make(chan syscall.WaitStatus, 1)
	go reapAll(pid, exited)

	hubGone := make(chan struct{})
	if watch != "" {
		go watchHub(watch, hubGone)
	}
	for {
		select {
		case ws := <-exited:
			// Whatever the command left running goes with it.
			syscall.Kill(-pid, syscall.SIGKILL)
			if ws.Signaled() {
				return 128 + int(ws.Signal())
			}
			return ws.ExitStatus()
		case s := <-sigs:
			syscall.Kill(-pid, s.(syscall.Signal))
		case <-hubGone:
			fmt.Fprintln(errOut, "chaos-relay serve: the trial's hub is gone (its worker stopped): the agent is stopped")
			syscall.Kill(-pid, syscall.SIGKILL)
			return 128 + int(syscall.SIGKILL)
		}
	}
}

// isLoopbackHost says the host part of a listen address is a loopback address: the
// relay never listens beyond the container's loopback.
func isLoopbackHost(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// accept forwards each connection on ln to the unix socket, bytes as they are.
func accept(ln net.Listener, socket string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		go pipe(c, socket)
	}
}

func pipe(c net.Conn, socket string) {
	defer c.Close()
	u, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: socket, Net: "unix"})
	if err != nil {
		return // the client sees its connection closed: the hub is not there
	}
	defer u.Close()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		io.Copy(u, c)
		u.CloseWrite()
	}()
	io.Copy(c, u)
	if tc, ok := c.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
	wg.Wait()
}

// reapAll waits for every child this process gets (as PID 1 it inherits the agent's
// orphans) and sends the command's own status on exited.
func reapAll(pid int, exited chan<- syscall.WaitStatus) {
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return // no child left
		}
		if got == pid {
			exited <- ws
		}
	}
}

// watchHub closes gone once the hub's socket refuses connections: the worker that
// served it is dead. A hub that is only slow (a starved worker) still accepts.
func watchHub(socket string, gone chan<- struct{}) {
	for {
		time.Sleep(watchEvery)
		c, err := net.DialTimeout("unix", socket, 5*time.Second)
		if err == nil {
			c.Close()
			continue
		}
		if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) {
			close(gone)
			return
		}
	}
}
