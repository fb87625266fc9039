package stdio

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"

	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/proxies/mcpwall"
)

// StreamServer serves the hub's tools over MCP as a stream, one JSON-RPC message a line,
// on a unix socket: what a trial's {wall}, the relay (cmd/chaos-relay), connects the
// agent's stdio to. Each connection is one MCP session, served as stdio is (the same
// guard, MCP server and Hub.Call) and recorded with transport "stdio":
//
//	agent ──stdio──> chaos-relay ══unix socket══> GuardedTransport ──> MCP server ──> Hub.Call
//
// The socket is the only way in, so it lives in a folder of its own made for it (0700)
// and is itself 0600: only this user reaches the hub.
type StreamServer struct {
	// Path is the socket's path, the relay's argument.
	Path string

	hub    *hub.Hub
	dir    string
	ln     *net.UnixListener
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
}

// maxSocketPath is the longest unix socket path every system takes (sun_path is 104
// bytes on macOS and the BSDs, 108 on Linux, the terminating NUL included).
const maxSocketPath = 103

// ErrSocketPathTooLong is returned by ServeStream when the folder it was given makes a
// socket path longer than the system takes.
var ErrSocketPathTooLong = errors.New("the unix socket's path would be too long")

// ServeStream makes a private folder (0700) under parent and serves the hub's MCP stream
// on a socket in it (0600). Close stops serving, ends the sessions and removes the folder.
func ServeStream(h *hub.Hub, parent string) (*StreamServer, error) {
	// The folder's name is short so that the socket's path fits where the parent's does.
	if len(filepath.Join(parent, "wall-0123456789", "hub")) > maxSocketPath {
		return nil, fmt.Errorf("%w: %s is too deep a folder", ErrSocketPathTooLong, parent)
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("wall: make the folder for the hub's socket: %w", err)
	}
	dir, err := os.MkdirTemp(parent, "wall-") // 0700
	if err != nil {
		return nil, fmt.Errorf("wall: make the folder for the hub's socket: %w", err)
	}
	path := filepath.Join(dir, "hub")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err == nil {
		err = os.Chmod(path, 0o600)
	}
	if err != nil {
		if ln != nil {
			ln.Close()
		}
		os.RemoveAll(dir)
		return nil, fmt.Errorf("wall: listen on the unix socket %s: %w", path, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &StreamServer{Path: path, hub: h, dir: dir, ln: ln, ctx: ctx, cancel: cancel, conns: map[net.Conn]bool{}}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

func (s *StreamServer) accept() {
	defer s.wg.Done()
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			return // closed
		}
		if !s.track(conn) {
			conn.Close()
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.untrack(conn)
			s.serve(conn)
		}()
	}
}

// serve is one MCP session on conn, as ServeStdio serves one on a process's stdio.
func (s *StreamServer) serve(conn net.Conn) {
	h := s.hub
	t := &mcpwall.GuardedTransport{In: conn, Out: conn, OnReject: func(reason string) { h.RecordError("stdio", reason) }, Hub: h, Transport: "stdio"}
	// An error here is the stream's end (the relay killed with its agent, or Close): no
	// call is lost with it, since every call is recorded by Hub.Call before it is answered.
	mcpwall.Run(s.ctx, mcpwall.NewServer(h, "stdio"), t)
	// The session is over (the agent closed its end, or the hub is closing): closing the
	// socket ends the relay.
	conn.Close()
}

func (s *StreamServer) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[c] = true
	return true
}

func (s *StreamServer) untrack(c net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
}

// Close stops serving: no new connections, the open sessions end (their relays exit),
// and the socket's folder is removed. It may be called more than once.
func (s *StreamServer) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.cancel()
	err := s.ln.Close()
	s.wg.Wait()
	if rerr := os.RemoveAll(s.dir); err == nil {
		err = rerr
	}
	return err
}
