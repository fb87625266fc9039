package httpwall

import (
	"fmt"
	"net"
	"os"
)

// ServeUnix serves what s serves (the hub's HTTP transports and the model proxy) on a
// unix socket at path too, made with mode perm: the way in for an agent in a container,
// whose relay (`chaos-relay serve`) forwards its loopback {wall_url} and {llm_url} here.
// Its connections count as loopback ones, so protect refuses a Host that is not
// loopback there too (the relay passes the agent's, 127.0.0.1:PORT). Close stops both
// listeners and removes the socket.
func (s *Server) ServeUnix(path string, perm os.FileMode) error {
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return fmt.Errorf("wall: listen on the unix socket %s: %w", path, err)
	}
	if err := os.Chmod(path, perm); err != nil {
		ln.Close()
		return fmt.Errorf("wall: the unix socket %s: %w", path, err)
	}
	// Shutdown (Close) closes every listener the server serves, this one included, and
	// the listener removes its socket file when closed.
	go s.srv.Serve(loopbackListener{ln})
	return nil
}

// loopbackListener's connections say their local address is the loopback interface's:
// what the relay stands in for.
type loopbackListener struct{ net.Listener }

func (l loopbackListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return loopbackConn{c}, nil
}

type loopbackConn struct{ net.Conn }

func (loopbackConn) LocalAddr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }
