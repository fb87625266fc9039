//go:build !noserver

package worker

import (
	"fmt"
	"net"
	"strconv"
)

// freePort asks the kernel for a free TCP port on ip.
//
// The port is released before the server binds it, so another bind(:0) could be
// handed the same number in between. To make that unlikely, the port is left in
// TIME_WAIT by closing a connection to it from the accepting side: the kernel does
// not give a TIME_WAIT port to bind(:0), while Go's listeners (SO_REUSEADDR) can
// still bind it explicitly.
func freePort(ip string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return 0, fmt.Errorf("find a free port on %s: %w", ip, err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port

	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		return port, nil // still free; only the TIME_WAIT hint is lost
	}
	defer c.Close()
	if s, err := l.Accept(); err == nil {
		s.Close() // the accepting side closes first, so its end waits in TIME_WAIT
	}
	return port, nil
}

// checkPortFree reports whether ip:port can be bound right now.
func checkPortFree(ip string, port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("port %d on %s is not free: %w", port, ip, err)
	}
	return l.Close()
}

// pickPort returns port when it is given and free, or a free port when it is 0.
func pickPort(ip string, port int) (int, error) {
	if port == 0 {
		return freePort(ip)
	}
	if err := checkPortFree(ip, port); err != nil {
		return 0, err
	}
	return port, nil
}
