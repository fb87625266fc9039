package proxies

import (
	"fmt"
	"net"
	"os"
)

// ServeUnix serves what s serves (the hub's HTTP transports and the model proxy) on a
// unix socket at path too, made with mode perm: the way in for an agent in a container,
// whose relay (`chaos-relay serve`) forwards its loopback {wall_url} and {llm_url} here.
// The request's Host is the container's loopback address, which protect accepts as it
// does on the TCP listener. Close stops both listeners and removes the socket.
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
	go s.srv.Serve(ln)
	return nil
}
