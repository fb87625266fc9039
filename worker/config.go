package worker

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Defaults used when a ServerConfig field is left zero.
const (
	DefaultNamespace = "default"
	DefaultIP        = "127.0.0.1"
	// DefaultRetention is how long a closed workflow's history is kept when the
	// namespace is created by StartServer. Temporal's own default (one day) would
	// empty the web UI overnight.
	DefaultRetention = 7 * 24 * time.Hour
)

// NoUI as ServerConfig.UIPort starts the server without its web UI.
const NoUI = -1

var (
	// ErrNoEmbeddedServer is returned by StartServer in a binary built with -tags noserver.
	ErrNoEmbeddedServer = errors.New("this chaos binary was built without the embedded Temporal server; give --temporal ADDR")

	// ErrDataDirInUse is returned by StartServer when another server (in this or
	// another process) already runs on the same data directory: two servers on one
	// SQLite file would fight over the same history shard.
	ErrDataDirInUse = errors.New("data directory is in use by another chaos server")
)

// ServerConfig configures StartServer. The zero value is a working configuration: every
// zero field means its default.
type ServerConfig struct {
	// DataDir holds the SQLite file (temporal.db). Default: DefaultDataDir().
	DataDir string
	// DB, when set, is a PostgreSQL URL (postgres://USER:PASSWORD@HOST:PORT/DATABASE) to
	// keep the history in instead of the SQLite file; the schema is set up on start.
	DB string
	// Namespace is registered on start when missing. Default: "default".
	Namespace string
	// Retention of closed workflows in a namespace created by StartServer; an
	// existing namespace keeps its own. Default: DefaultRetention.
	Retention time.Duration
	// IP the frontend and the UI listen on. Default: 127.0.0.1.
	IP string
	// Port of the frontend gRPC API; 0 picks a free port.
	Port int
	// UIPort of the web UI; 0 picks a free port; NoUI (-1) starts no UI.
	UIPort int
	// Logger receives the server's logs (they are chatty: filter with the handler's
	// level). When nil they go to LogFile at info level, or nowhere when LogFile is empty.
	Logger  *slog.Logger
	LogFile string
}

// DefaultDataDir is where chaos keeps its data when not told otherwise:
// $XDG_DATA_HOME/chaos, or ~/.local/share/chaos.
func DefaultDataDir() (string, error) {
	if dir := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "chaos"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find a data directory for chaos (set XDG_DATA_HOME or HOME): %w", err)
	}
	return filepath.Join(home, ".local", "share", "chaos"), nil
}

// withDefaults returns cfg with every zero field filled in, or an error a user can act on.
func (cfg ServerConfig) withDefaults() (ServerConfig, error) {
	if cfg.DataDir == "" {
		dir, err := DefaultDataDir()
		if err != nil {
			return cfg, err
		}
		cfg.DataDir = dir
	}
	if cfg.Namespace == "" {
		cfg.Namespace = DefaultNamespace
	}
	if cfg.Retention == 0 {
		cfg.Retention = DefaultRetention
	}
	switch cfg.IP {
	case "":
		cfg.IP = DefaultIP
	case "localhost":
		// The server's membership needs an IP, not a name.
		cfg.IP = DefaultIP
	}
	if net.ParseIP(cfg.IP) == nil {
		return cfg, fmt.Errorf("server IP %q is not an IP address", cfg.IP)
	}
	if cfg.Port < 0 || cfg.Port > 65535 {
		return cfg, fmt.Errorf("server port %d is out of range (0 picks a free port)", cfg.Port)
	}
	if cfg.UIPort < NoUI || cfg.UIPort > 65535 {
		return cfg, fmt.Errorf("UI port %d is out of range (0 picks a free port, -1 disables the UI)", cfg.UIPort)
	}
	if cfg.Retention < 0 {
		return cfg, fmt.Errorf("retention %v is negative", cfg.Retention)
	}
	return cfg, nil
}
