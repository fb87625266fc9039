package stdio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/proxies/mcpwall"
)

// StreamServer serves the hub's tools over MCP as a stream, one JSON-RPC message a line,
// on a unix socket: what a trial's {wall}, the relay (cmd/chaos-relay), connects the
// agent's stdio to. Each connection is one MCP session, served as stdio is (the same
// guard, MCP server and Hub.Call) and recorded with transport "stdio".
//
// The relay hands over the agent's pipes themselves when it can: its first message is
// RelayHandshake alone, with its stdin and stdout as SCM_RIGHTS. When both are pipes or
// sockets the server answers "y" and serves the session on them, and the connection only
// tells it that the relay lives; otherwise it answers "n" and the connection carries the
// session's bytes, as it does for a client that sends no handshake at all:
//
//	agent ══stdio pipes, handed over══════════════> GuardedTransport ──> MCP server ──> Hub.Call
//	agent ──stdio──> chaos-relay ══unix socket══════┘ ("n", or no handshake: the relay copies)
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

	handedOver atomic.Int64
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
	err = writeOwner(dir) // for RemoveStaleFolders, should this process be killed
	var ln *net.UnixListener
	if err == nil {
		ln, err = net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	}
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
			s.serve(conn.(*net.UnixConn))
		}()
	}
}

// RelayHandshake is the relay's first message when it offers its stdin and stdout, sent
// alone with the two descriptors (cmd/chaos-relay's handshake). Its NUL starts no
// JSON-RPC line, so a client that speaks MCP straight away is never taken for a relay.
const RelayHandshake = "\x00chaos-relay fds 1\n"

// The server's one-byte answers to RelayHandshake.
const (
	tookStdio    = 'y' // serving the session on the descriptors; the socket carries nothing more
	refusedStdio = 'n' // not taken (closed): the socket carries the session's bytes from now on
)

// serve is one MCP session on conn, as ServeStdio serves one on a process's stdio: on
// the relay's stdin and stdout when it hands them over, else on conn's bytes.
func (s *StreamServer) serve(conn *net.UnixConn) {
	defer conn.Close()
	head, fds, err := readFirst(conn)
	if string(head) != RelayHandshake || err != nil {
		// An older relay, a client that speaks lines straight away (its first bytes are
		// the stream's), or descriptors with no handshake, which are not taken.
		closeFDs(fds)
		if err != nil {
			return
		}
		s.session(s.ctx, &prefixedConn{UnixConn: conn, head: head}, conn)
		return
	}
	stdin, stdout, ok := takeStdio(fds)
	if !ok {
		// No descriptors (a socket that drops them, such as Docker Desktop's proxy), or
		// not a pipe or a socket: the relay copies bytes on conn instead.
		if _, err := conn.Write([]byte{refusedStdio}); err == nil {
			s.session(s.ctx, conn, conn)
		}
		return
	}
	defer stdin.Close()
	defer stdout.Close()
	if _, err := conn.Write([]byte{tookStdio}); err != nil {
		return
	}
	s.handedOver.Add(1)
	// The relay sends nothing more and waits for conn's end: the socket's end on its side
	// is the relay's (killed with or without its agent), which ends the session as the
	// end of conn would; the session's end closes conn, which ends the relay.
	ctx, cancel := context.WithCancel(s.ctx)
	relayGone := make(chan struct{})
	go func() {
		defer close(relayGone)
		io.Copy(io.Discard, conn)
		cancel()
		// Ends a read or a write the session may be blocked in, as closing conn did.
		stdin.Close()
		stdout.Close()
	}()
	s.session(ctx, stdin, stdout)
	cancel()
	conn.Close()
	<-relayGone
}

// HandedOver is how many sessions were served on the stdin and stdout a relay handed
// over, rather than on its connection's bytes.
func (s *StreamServer) HandedOver() int64 { return s.handedOver.Load() }

// session serves one MCP session on in and out, until in ends or ctx does.
func (s *StreamServer) session(ctx context.Context, in io.Reader, out io.Writer) {
	h := s.hub
	t := &mcpwall.GuardedTransport{In: in, Out: out, OnReject: func(reason string) { h.RecordError("stdio", reason) }}
	// An error here is the stream's end (the relay killed with its agent, or Close): no
	// call is lost with it, since every call is recorded by Hub.Call before it is answered.
	// The session is over then (the agent closed its end, or the hub is closing): serve
	// closes the socket, which ends the relay.
	mcpwall.NewServer(h, "stdio").Run(ctx, t)
}

// prefixedConn is conn with head, the bytes already read from it, put back in front;
// it keeps conn's read deadline, by which the guard ends a read when the session ends.
type prefixedConn struct {
	*net.UnixConn
	head []byte
}

func (c *prefixedConn) Read(p []byte) (int, error) {
	if len(c.head) > 0 {
		n := copy(p, c.head)
		c.head = c.head[n:]
		return n, nil
	}
	return c.UnixConn.Read(p)
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
