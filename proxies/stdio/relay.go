package stdio

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"

	"github.com/crashwall/chaos/proxies/httpwall"
	"github.com/crashwall/chaos/spec"
)

// RelayName is the relay's executable (cmd/chaos-relay), looked for next to the chaos
// binary: `go install ./cmd/...`, `make build`, the worker image and the tests' build put
// the two side by side.
const RelayName = "chaos-relay"

// FindRelay returns the relay that sits next to the chaos binary bin, or "" when there is
// none (`go run ./cmd/chaos` runs a binary alone in a cache folder): the trial's {wall}
// is then `chaos wall --hub URL`, which serves the same hub over HTTP, only slower.
func FindRelay(bin string) string {
	name := RelayName
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	relay := filepath.Join(filepath.Dir(bin), name)
	if fi, err := os.Stat(relay); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return ""
	}
	return relay
}

// RelayCommand is the {wall} token with the relay: a shell command line (run with sh -c)
// that connects MCP on stdio to the hub's stream at socket (ServeStream).
func RelayCommand(relay, socket string) string {
	return spec.ShellQuote(relay) + " " + spec.ShellQuote(socket)
}

// RelayMCPConfig is the {mcp_config} token with the relay (see WallMCPConfig).
func RelayMCPConfig(relay, socket string) string {
	return mcpConfig(relay, []string{socket})
}

// RelayCodexConfig is the {codex_config} token with the relay (see WallCodexConfig).
func RelayCodexConfig(relay, socket string) string {
	return codexConfig(relay, []string{socket})
}

// StdioWall is the wall an agent starts over stdio for a served hub: Command is the
// {wall} token, MCPConfig the {mcp_config} one, CodexConfig the {codex_config} one.
type StdioWall struct {
	Command, MCPConfig, CodexConfig string
	// Stream is the hub's stream the relay connects to; nil when the wall is
	// `chaos wall --hub URL`, bridged over HTTP.
	Stream *StreamServer
}

// OpenStdioWall is the stdio wall for the hub served at srv: the relay next to the chaos
// binary bin, on a socket in a private folder under dir (or the temporary folder when dir
// is too deep for a socket's path), when there is a relay; else `chaos wall --hub URL`.
// Both record the same calls, with transport stdio. A non-nil error says why a relay that
// is there is not used; the wall returned works all the same.
func OpenStdioWall(srv *httpwall.Server, bin, dir string) (StdioWall, error) {
	bridge := StdioWall{Command: WallCommand(bin, srv.URL), MCPConfig: WallMCPConfig(bin, srv.URL), CodexConfig: WallCodexConfig(bin, srv.URL)}
	relay := FindRelay(bin)
	if relay == "" {
		return bridge, nil
	}
	st, err := ServeStream(srv.Hub, dir)
	if errors.Is(err, ErrSocketPathTooLong) {
		st, err = ServeStream(srv.Hub, os.TempDir())
	}
	if err != nil {
		return bridge, err
	}
	return StdioWall{Command: RelayCommand(relay, st.Path), MCPConfig: RelayMCPConfig(relay, st.Path), CodexConfig: RelayCodexConfig(relay, st.Path), Stream: st}, nil
}

// Close stops serving the relay's stream, if there is one.
func (w StdioWall) Close() error {
	if w.Stream == nil {
		return nil
	}
	return w.Stream.Close()
}
