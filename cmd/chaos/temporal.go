package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/crashwall/chaos/store"
	"github.com/crashwall/chaos/worker"
)

// TemporalFlags are the flags every command that talks to Temporal takes.
type TemporalFlags struct {
	Address   string
	Namespace string
	DataDir   string
	// ChaosBin is the chaos binary trials start for {wall} (tests point it at a built one).
	ChaosBin string
	// Results is the results database an embedded worker copies runs into.
	Results ResultsFlags
}

// serverFile is where a running `chaos server` leaves its addresses, so that commands
// without --temporal find it instead of starting a second server on the same data.
const serverFile = "server.json"

type serverAddrs struct {
	Frontend string `json:"frontend"`
	UI       string `json:"ui"`
	PID      int    `json:"pid"`
}

// conn is a Temporal client and, for the embedded default, the server and worker this
// process started.
type conn struct {
	Client   client.Client
	Server   *worker.Server
	Worker   sdkworker.Worker
	Embedded bool
	// Results is the results database the embedded worker writes to (nil: none).
	Results *store.Store
	UI      string
	LogPath string
	logFile *os.File
}

func (c *conn) Close() {
	if c.Worker != nil {
		c.Worker.Stop()
	}
	if c.Client != nil {
		c.Client.Close()
	}
	if c.Server != nil {
		_ = c.Server.Stop()
	}
	c.Results.Close()
	if c.logFile != nil {
		c.logFile.Close()
	}
}

func dataDir(flags TemporalFlags) (string, error) {
	if flags.DataDir != "" {
		return flags.DataDir, nil
	}
	return worker.DefaultDataDir()
}

// connect reaches Temporal: the address given, else a `chaos server` running on the data
// directory, else an embedded server started here (with a worker when withWorker).
func connect(ctx context.Context, flags TemporalFlags, withWorker bool, logName string) (*conn, error) {
	dir, err := dataDir(flags)
	if err != nil {
		return nil, err
	}
	c := &conn{}
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o700); err != nil {
		return nil, fmt.Errorf("create the log folder: %w", err)
	}
	c.LogPath = filepath.Join(dir, "logs", logName+".log")
	if c.logFile, err = os.OpenFile(c.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err != nil {
		return nil, fmt.Errorf("open the log file: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(c.logFile, &slog.HandlerOptions{Level: slog.LevelInfo}))

	addr := flags.Address
	if addr == "" {
		if a, ok := runningServer(dir); ok {
			addr, c.UI = a.Frontend, a.UI
		}
	}
	if addr == "" && withWorker {
		// The embedded worker writes results: a database that cannot be used stops the
		// run before anything starts.
		if c.Results, err = openResults(ctx, flags.Results); err != nil {
			c.Close()
			return nil, err
		}
	}
	if addr == "" {
		srv, err := worker.StartServer(ctx, worker.ServerConfig{DataDir: dir, Namespace: flags.Namespace, Logger: logger})
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("start the embedded Temporal server: %w", err)
		}
		c.Server, c.Embedded, c.UI = srv, true, srv.UIAddr()
		addr = srv.FrontendAddr()
	}
	cl, err := client.DialContext(ctx, worker.ClientOptions(client.Options{HostPort: addr, Namespace: namespace(flags), Logger: sdklog.NewStructuredLogger(logger)}))
	if err != nil {
		c.Close()
		return nil, badInput(fmt.Errorf("cannot reach Temporal at %s: %w (is the server running? start one with chaos server, or leave out --temporal to use the embedded one)", addr, err))
	}
	c.Client = cl
	if withWorker && c.Embedded {
		c.Worker = worker.NewWorker(cl, worker.WorkerOptions{Logger: logger, ChaosBin: flags.ChaosBin, JudgeRegistry: filepath.Join(dir, "judges.json"),
			Results: c.Results, StoreCalls: flags.Results.Calls})
		if err := c.Worker.Start(); err != nil {
			c.Close()
			return nil, fmt.Errorf("start the worker: %w", err)
		}
	}
	return c, nil
}

func namespace(flags TemporalFlags) string {
	if flags.Namespace == "" {
		return worker.DefaultNamespace
	}
	return flags.Namespace
}

// runningServer reads the addresses a live `chaos server` left in the data directory.
func runningServer(dir string) (serverAddrs, bool) {
	b, err := os.ReadFile(filepath.Join(dir, serverFile))
	if err != nil {
		return serverAddrs{}, false
	}
	var a serverAddrs
	if json.Unmarshal(b, &a) != nil || a.Frontend == "" {
		return serverAddrs{}, false
	}
	if p, err := os.FindProcess(a.PID); err != nil || p.Signal(syscallZero) != nil {
		return serverAddrs{}, false
	}
	return a, true
}

func writeServerFile(dir string, a serverAddrs) error {
	b, _ := json.MarshalIndent(a, "", "  ")
	return os.WriteFile(filepath.Join(dir, serverFile), b, 0o600)
}
