package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/crashwall/chaos/redact"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/store"
	"github.com/crashwall/chaos/within"
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
	// TaskQueue is the task queue of an embedded worker (not a flag: chaos run gives each
	// run its own, so that its worker never takes another run's trials; "": run.TaskQueue).
	TaskQueue string
	// NewRun says a new run is connecting: where another chaos run's embedded server has
	// the data directory, it starts its own beside it instead of attaching to one that
	// ends with the other run.
	NewRun bool
	// MaxTrials is how many trials at once the embedded worker holds (not a flag: chaos
	// run's concurrency; 0: the worker's default).
	MaxTrials int
	// WorkerLater: connect starts no worker; the caller does (conn.startWorker), once it
	// knows how many trials the worker must hold (chaos resume reads it from the run).
	WorkerLater bool
}

// serverFile is where a running `chaos server` leaves its addresses, so that commands
// without --temporal find it instead of starting a second server on the same data.
const serverFile = "server.json"

type serverAddrs struct {
	Frontend string `json:"frontend"`
	UI       string `json:"ui"`
	PID      int    `json:"pid"`
	// Run is set when the server is a chaos run's embedded one, which ends with that run:
	// other commands may use it, another run does not (it starts its own elsewhere).
	Run string `json:"run,omitempty"`
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
	// TaskQueue is where runs go to be run: the embedded worker's, else run.TaskQueue.
	TaskQueue string
	// DataDir is the data directory in use, and Note says why it is not the one asked for.
	DataDir, Note  string
	ownsServerFile bool
	// flags and logger make the worker (startWorker).
	flags  TemporalFlags
	logger *slog.Logger
}

// startWorker starts a worker here on queue that holds maxTrials trials at once (0: the
// worker's default), writing its log where the connection's goes.
func (c *conn) startWorker(queue string, maxTrials int) error {
	c.Worker = worker.NewWorker(c.Client, worker.WorkerOptions{MaxTrials: maxTrials, Logger: c.logger, ChaosBin: c.flags.ChaosBin,
		JudgeRegistry: filepath.Join(c.DataDir, "judges.json"), Results: c.Results, StoreCalls: c.flags.Results.Calls, TaskQueue: queue})
	if err := c.Worker.Start(); err != nil {
		c.Worker = nil
		return err
	}
	return nil
}

func (c *conn) Close() {
	if c.Worker != nil {
		c.Worker.Stop()
	}
	if c.Client != nil {
		c.Client.Close()
	}
	if c.ownsServerFile {
		_ = os.Remove(filepath.Join(c.DataDir, serverFile))
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
	// The name becomes a log file and may become a data directory under dir.
	if msg := within.Name(logName); msg != "" {
		return nil, badInput(fmt.Errorf("%q cannot name a log file in the data directory: it %s", logName, msg))
	}
	dir, err := dataDir(flags)
	if err != nil {
		return nil, err
	}
	c := &conn{TaskQueue: run.TaskQueue, DataDir: dir, flags: flags}
	var other serverAddrs
	if flags.Address == "" && flags.NewRun {
		// Another chaos run's embedded server ends with that run: this run keeps its
		// history in a data directory of its own beside it.
		if a, ok := runningServer(dir); ok && a.Run != "" {
			other, dir = a, filepath.Join(dir, logName)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o700); err != nil {
		return nil, fmt.Errorf("create the log folder: %w", err)
	}
	if c.LogPath, err = within.Join(filepath.Join(dir, "logs"), logName+".log"); err != nil {
		return nil, badInput(fmt.Errorf("the log of %s cannot be kept: %w", logName, err))
	}
	if c.logFile, err = os.OpenFile(c.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err != nil {
		return nil, fmt.Errorf("open the log file: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(redact.Known.EachWrite(c.logFile), &slog.HandlerOptions{Level: slog.LevelInfo}))
	c.logger = logger

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
		if errors.Is(err, worker.ErrDataDirInUse) && flags.NewRun && other.PID == 0 {
			// Two runs started at once: the other took the directory before it said so.
			other, dir = serverAddrs{Run: "?"}, filepath.Join(dir, logName)
			if err = os.MkdirAll(dir, 0o700); err == nil {
				srv, err = worker.StartServer(ctx, worker.ServerConfig{DataDir: dir, Namespace: flags.Namespace, Logger: logger})
			}
		}
		if err != nil {
			c.Close()
			// As chaos server says it (exit 1): a data directory another chaos holds, a
			// port in use, a database that refuses.
			return nil, badInput(fmt.Errorf("start the embedded Temporal server: %w", err))
		}
		c.Server, c.Embedded, c.UI, c.DataDir = srv, true, srv.UIAddr(), dir
		addr = srv.FrontendAddr()
		if other.Run != "" {
			c.Note = fmt.Sprintf("the data directory is in use by another chaos run; this run keeps its history in %s (give it as --data-dir to chaos runs, abort or resume)", dir)
		}
		if withWorker && flags.TaskQueue != "" {
			c.TaskQueue = flags.TaskQueue
			// Other commands on this data directory (runs, abort, another run) find
			// this server while the run lasts.
			if err := writeServerFile(dir, serverAddrs{Frontend: addr, UI: c.UI, PID: os.Getpid(), Run: flags.TaskQueue}); err == nil {
				c.ownsServerFile = true
			}
		}
	}
	cl, err := client.DialContext(ctx, worker.ClientOptions(client.Options{HostPort: addr, Namespace: namespace(flags), Logger: sdklog.NewStructuredLogger(logger)}))
	if err != nil {
		c.Close()
		return nil, badInput(fmt.Errorf("cannot reach Temporal at %s: %w (is the server running? start one with chaos server, or leave out --temporal to use the embedded one)", addr, err))
	}
	c.Client = cl
	if withWorker && c.Embedded && !flags.WorkerLater {
		if err := c.startWorker(c.TaskQueue, flags.MaxTrials); err != nil {
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

// embeds says whether connect will start a server and worker of its own for flags (no
// --temporal, no chaos server on the data directory to attach to).
func embeds(flags TemporalFlags) bool {
	if flags.Address != "" {
		return false
	}
	dir, err := dataDir(flags)
	if err != nil {
		return true
	}
	a, ok := runningServer(dir)
	return !ok || (flags.NewRun && a.Run != "")
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
