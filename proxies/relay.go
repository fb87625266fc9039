package proxies

import (
	"os"
	"path/filepath"
	"runtime"

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
