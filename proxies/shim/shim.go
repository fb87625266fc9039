// Package shim is the script wall: a folder of launchers put first on the agent's PATH,
// named after the interpreters and commands the spec's scripts list (python3, node,
// bash, a script's own name). A launcher is a two-line sh script that runs the relay
// (cmd/chaos-relay) in its shim mode, which asks the hub over a unix socket what to do:
//
//	agent ──sh: python3 scripts/set.py R-101 shipped──> launcher ──> chaos-relay shim
//	   ──unix socket, one JSON line each way──> Shim ──> Hub.CallCommand ──> faults ──> world
//	agent <── stdout, stderr, exit code ──────────────────┘
//
// A call whose script matches one of the spec's scripts is answered by the twin (the
// simulated world, through the hub, recorded with transport "shim", its argv, exit code,
// stdout, stderr and the state after) and the real script never runs; a matching
// `real: true` script runs for real; any other call of a launcher fails closed (a
// message on stderr, exit 1, a rejected row). Commands without a launcher run as they
// would. The agent works on a copy of the project (the sandbox); Outside reports what
// changed in the original.
package shim

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path"
	"path/filepath"
	"sync"

	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/spec"
)

// Transport is the transport of a shimmed call in the record.
const Transport = "shim"

// Request is what a launcher sends: the launcher's name, the arguments after it, and
// the folder it was run in.
type Request struct {
	Launcher string   `json:"launcher"`
	Args     []string `json:"args"`
	Cwd      string   `json:"cwd"`
}

// Response is what it gets back: run the real program, or exit with this output.
type Response struct {
	Run    bool   `json:"run,omitempty"`
	Exit   int    `json:"exit"`
	Stdout string `json:"stdout,omitempty"`
	Stderr string `json:"stderr,omitempty"`
}

// maxRequest bounds a launcher's request line (an argv is at most a few MB on Linux).
const maxRequest = 4 << 20

// Config is what a shim needs.
type Config struct {
	Scripts []spec.Script
	// Sandbox is the agent's copy of the project: scripts' paths are relative to it.
	Sandbox string
	// Original is the project the sandbox was copied from, and Files its entries that
	// were copied (workspace.files): a change to them is outside.
	Original string
	Files    []string
	// Relay is the chaos-relay binary the launchers run.
	Relay string
	// Parent is the folder the shim's private folder is made in (a short path: it holds
	// the socket).
	Parent string
	// Path is the agent's PATH, where the real programs of the launchers are found.
	Path string
	// Container, when set, is where an agent's container sees the shim's folder (Dir,
	// bind-mounted read-only), and ContainerRelay the relay there: the launchers are
	// written for the container, and find a real program on the container's PATH when
	// they run.
	Container, ContainerRelay string
}

// LookupPrefix starts a launcher's REAL argument that asks the relay to find the program
// on PATH when it runs, past the folder named after the prefix (a container's launchers:
// the program is on the container's PATH, not the worker's).
const LookupPrefix = "lookup:"

// Shim serves one trial's launchers.
type Shim struct {
	// Bin is the folder of launchers to put first on the agent's PATH ({shim_path}).
	Bin string
	// Socket is the unix socket the launchers reach the hub on.
	Socket string
	// Dir is the shim's private folder, which holds Bin and Socket.
	Dir string

	hub     *hub.Hub
	cfg     Config
	dir     string
	ln      *net.UnixListener
	snap    snapshot
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.Mutex
	outside []string
	checked bool
}

// maxSocketPath is the longest unix socket path every system takes.
const maxSocketPath = 103

// Open makes the shim's private folder (0700) under cfg.Parent, with the launchers in
// its bin folder and the socket they reach, snapshots the original project and serves.
func Open(h *hub.Hub, cfg Config) (*Shim, error) {
	if cfg.Relay == "" {
		return nil, errors.New("shim: no chaos-relay next to the chaos binary: the launchers need it (go build ./cmd/chaos-relay beside chaos)")
	}
	for _, p := range []string{os.TempDir(), "/tmp"} {
		if len(filepath.Join(cfg.Parent, "shim-0123456789", "hub")) > maxSocketPath {
			cfg.Parent = p // a socket's path is short
		}
	}
	if err := os.MkdirAll(cfg.Parent, 0o755); err != nil {
		return nil, fmt.Errorf("shim: %w", err)
	}
	dir, err := os.MkdirTemp(cfg.Parent, "shim-")
	if err != nil {
		return nil, fmt.Errorf("shim: %w", err)
	}
	s := &Shim{Bin: filepath.Join(dir, "bin"), Socket: filepath.Join(dir, "hub"), Dir: dir, hub: h, cfg: cfg, dir: dir}
	fail := func(err error) (*Shim, error) {
		if s.ln != nil {
			s.ln.Close()
		}
		os.RemoveAll(dir)
		return nil, fmt.Errorf("shim: %w", err)
	}
	if err := os.Mkdir(s.Bin, 0o755); err != nil {
		return fail(err)
	}
	if s.snap, err = takeSnapshot(cfg.Original, cfg.Files); err != nil {
		return fail(fmt.Errorf("snapshot the original project: %w", err))
	}
	s.ln, err = net.ListenUnix("unix", &net.UnixAddr{Name: s.Socket, Net: "unix"})
	if err == nil {
		err = os.Chmod(s.Socket, 0o600)
	}
	if err != nil {
		return fail(err)
	}
	launchers := map[string]bool{}
	for _, sc := range cfg.Scripts {
		for _, l := range sc.Launchers {
			launchers[l] = true
		}
	}
	for l := range launchers {
		if err := s.writeLauncher(l); err != nil {
			return fail(err)
		}
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// writeLauncher writes the launcher of name: the relay in shim mode, given the socket,
// the name and the real program of that name on the agent's PATH ("" when there is none).
func (s *Shim) writeLauncher(name string) error {
	relay, sock, real := s.cfg.Relay, s.Socket, lookPath(name, s.cfg.Path, s.Bin)
	if c := s.cfg.Container; c != "" {
		relay, sock, real = s.cfg.ContainerRelay, path.Join(c, "hub"), LookupPrefix+path.Join(c, "bin")
	}
	text := "#!/bin/sh\n# chaos shim: " + name + " answered by the trial's twin (proxies/shim)\nexec " +
		spec.ShellQuote(relay) + " shim " + spec.ShellQuote(sock) + " " + spec.ShellQuote(name) + " " + spec.ShellQuote(real) + ` "$@"` + "\n"
	return os.WriteFile(filepath.Join(s.Bin, name), []byte(text), 0o755)
}

// lookPath is name's program on path, skipping the shim's own folder.
func lookPath(name, path, skip string) string {
	for _, dir := range filepath.SplitList(path) {
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

// PathWith is path with the shim's launchers first.
func (s *Shim) PathWith(path string) string {
	if path == "" {
		return s.Bin
	}
	return s.Bin + string(filepath.ListSeparator) + path
}

func (s *Shim) accept() {
	defer s.wg.Done()
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer conn.Close()
			s.serve(conn)
		}()
	}
}

// serve answers one launcher: one request line, one response line.
func (s *Shim) serve(conn net.Conn) {
	r := bufio.NewReaderSize(conn, 64<<10)
	line, err := readLine(r, maxRequest)
	var resp Response
	var req Request
	switch {
	case err != nil:
		resp = Response{Exit: 1, Stderr: "chaos shim: unreadable request: " + err.Error() + "\n"}
		s.hub.RecordError(Transport, "a launcher's request could not be read: "+err.Error())
	case json.Unmarshal(line, &req) != nil || req.Launcher == "":
		resp = Response{Exit: 1, Stderr: "chaos shim: malformed request\n"}
		s.hub.RecordError(Transport, "a launcher sent a malformed request")
	default:
		resp = s.Handle(s.ctx, req)
	}
	b, _ := json.Marshal(resp)
	conn.Write(append(b, '\n'))
}

func readLine(r *bufio.Reader, limit int) ([]byte, error) {
	var out []byte
	for {
		chunk, err := r.ReadSlice('\n')
		out = append(out, chunk...)
		if len(out) > limit {
			return nil, fmt.Errorf("longer than %d bytes", limit)
		}
		switch {
		case err == nil:
			return out, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, err
		}
	}
}

// Outside checks the original project against its snapshot, records each change once
// as an outside row, and returns every change found so far (sorted).
func (s *Shim) Outside() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	changes, err := s.snap.diff(s.cfg.Original, s.cfg.Files)
	if err != nil {
		changes = append(changes, "the original project could not be read: "+err.Error())
	}
	for _, c := range changes {
		if !contains(s.outside, c) {
			s.outside = append(s.outside, c)
			s.hub.RecordOutside(Transport, c)
		}
	}
	return append([]string(nil), s.outside...)
}

func contains(l []string, v string) bool {
	for _, x := range l {
		if x == v {
			return true
		}
	}
	return false
}

// Close stops serving (a launcher started after it fails closed) and removes the
// shim's folder.
func (s *Shim) Close() error {
	s.ln.Close()
	if s.cancel != nil {
		s.cancel()
	}
	s.wg.Wait()
	return os.RemoveAll(s.dir)
}
