package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/crashwall/chaos/redact"
	"github.com/crashwall/chaos/run"
	"github.com/crashwall/chaos/store"
	"github.com/crashwall/chaos/worker"
)

// ServerOptions are the inputs of `chaos server`.
type ServerOptions struct {
	IO       *IOStreams
	Temporal TemporalFlags
	Port     int
	UIPort   int
	NoWorker bool
	// MaxTrials is how many trials at once the server's worker holds.
	MaxTrials int
	// DB is a PostgreSQL URL for the history ("": SQLite in the data directory).
	DB      string
	Results ResultsFlags
}

// NewCmdServer builds `chaos server`: the embedded Temporal server and its web UI, kept up
// for many runs.
func NewCmdServer(ios *IOStreams) *cobra.Command {
	opts := &ServerOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Keep the embedded Temporal server, its web UI and a worker up for many runs",
		Long: `chaos server starts the embedded Temporal server (history in SQLite under the data
directory, or in PostgreSQL with --db), its web UI, and a chaos worker, and keeps them up
until Ctrl-C. chaos run, runs and abort find it through the data directory; other hosts
reach it with --temporal ADDR.

With --db postgres://USER:PASSWORD@HOST:PORT/DATABASE the history goes to that database
(and visibility to DATABASE_visibility): they are created when missing, and Temporal's
schema is set up or upgraded on every start. With --results-db (or $` + store.EnvURL + `)
the worker copies every run into the results database.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return serverRun(cmd.Context(), opts) },
	}
	cmd.Flags().StringVar(&opts.Temporal.DataDir, "data-dir", "", "where history and logs are kept (default $XDG_DATA_HOME/chaos)")
	cmd.Flags().StringVar(&opts.Temporal.Namespace, "namespace", "", "Temporal namespace (default \"default\")")
	cmd.Flags().IntVar(&opts.Port, "port", 7233, "frontend gRPC port (0: any free port)")
	cmd.Flags().IntVar(&opts.UIPort, "ui-port", serverUIPort, "web UI port (0: any free port, -1: no UI)")
	cmd.Flags().BoolVar(&opts.NoWorker, "no-worker", false, "run no worker here (workers join with chaos worker --temporal ADDR)")
	cmd.Flags().IntVar(&opts.MaxTrials, "max-trials", 8, "trials the server's worker runs at once (a run's --concurrency is refused past what its workers hold)")
	cmd.Flags().StringVar(&opts.DB, "db", "", "PostgreSQL URL to keep Temporal's history in (default: SQLite in the data directory); its password as ${VAR}, PGPASSWORD or PGPASSFILE, never here")
	addResultsFlags(cmd, &opts.Results, true)
	return cmd
}

func serverRun(ctx context.Context, opts *ServerOptions) error {
	dir, err := dataDir(opts.Temporal)
	if err != nil {
		return err
	}
	if !opts.NoWorker {
		if err := checkMaxTrials(opts.MaxTrials); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o700); err != nil {
		return err
	}
	logPath := filepath.Join(dir, "logs", "server.log")
	var results *store.Store
	if !opts.NoWorker {
		if results, err = openResults(ctx, opts.Results); err != nil {
			return err
		}
		defer results.Close()
	}
	srv, err := worker.StartServer(ctx, worker.ServerConfig{DataDir: dir, DB: opts.DB, Namespace: opts.Temporal.Namespace, Port: opts.Port, UIPort: opts.UIPort, LogFile: logPath})
	if err != nil {
		return badInput(fmt.Errorf("start the server: %w", err))
	}
	defer srv.Stop()
	if err := writeServerFile(dir, serverAddrs{Frontend: srv.FrontendAddr(), UI: srv.UIAddr(), PID: os.Getpid()}); err != nil {
		return err
	}
	defer os.Remove(filepath.Join(dir, serverFile))
	fmt.Fprintf(opts.IO.Out, "Temporal server: %s (namespace %s)\n", srv.FrontendAddr(), namespace(opts.Temporal))
	if ui := srv.UIAddr(); ui != "" {
		fmt.Fprintf(opts.IO.Out, "Temporal web UI: %s\n", ui)
	}
	history := dir
	if opts.DB != "" {
		history = "PostgreSQL " + store.Where(opts.DB)
	}
	fmt.Fprintf(opts.IO.Out, "history: %s\nlogs:    %s\n", history, logPath)
	if results != nil {
		fmt.Fprintf(opts.IO.Out, "results: PostgreSQL %s\n", results.Where())
	}
	if !opts.NoWorker {
		logger := slog.New(slog.NewTextHandler(mustAppend(filepath.Join(dir, "logs", "worker.log")), nil))
		c, err := client.DialContext(ctx, worker.ClientOptions(client.Options{HostPort: srv.FrontendAddr(), Namespace: namespace(opts.Temporal), Logger: sdklog.NewStructuredLogger(logger)}))
		if err != nil {
			return err
		}
		defer c.Close()
		w := worker.NewWorker(c, worker.WorkerOptions{MaxTrials: opts.MaxTrials, Logger: logger, Results: results, StoreCalls: opts.Results.Calls})
		if err := w.Start(); err != nil {
			return err
		}
		defer w.Stop()
		fmt.Fprintf(opts.IO.Out, "worker:  running on task queue %s, up to %d trials at once\n", run.TaskQueue, opts.MaxTrials)
	}
	fmt.Fprintln(opts.IO.Out, "ready; Ctrl-C stops")
	<-ctx.Done()
	fmt.Fprintln(opts.IO.Out, "stopping")
	return nil
}

// mustAppend is a log file opened for appending (stderr if it cannot be), every secret
// value known redacted from what is written to it.
func mustAppend(path string) io.Writer {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return redact.Known.EachWrite(os.Stderr)
	}
	return redact.Known.EachWrite(f)
}

// WorkerCmdOptions are the inputs of `chaos worker`.
type WorkerCmdOptions struct {
	IO        *IOStreams
	Temporal  TemporalFlags
	MaxTrials int
	Results   ResultsFlags
}

// NewCmdWorker builds `chaos worker --temporal ADDR`.
func NewCmdWorker(ios *IOStreams) *cobra.Command {
	opts := &WorkerCmdOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "worker --temporal ADDR",
		Short: "Join a Temporal cluster as a chaos worker (runs trials on this host)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Temporal.Address == "" {
				return badInput(fmt.Errorf("--temporal ADDR is required: the frontend of the cluster to join (chaos server prints it)"))
			}
			return workerRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Temporal.Address, "temporal", "", "Temporal frontend host:port")
	cmd.Flags().StringVar(&opts.Temporal.Namespace, "namespace", "", "Temporal namespace (default \"default\")")
	cmd.Flags().IntVar(&opts.MaxTrials, "max-trials", 8, "trials this worker runs at once (a run's --concurrency is refused past what its workers hold)")
	addResultsFlags(cmd, &opts.Results, true)
	return cmd
}

func workerRun(ctx context.Context, opts *WorkerCmdOptions) error {
	if err := checkMaxTrials(opts.MaxTrials); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(opts.IO.ErrOut, &slog.HandlerOptions{Level: slog.LevelWarn}))
	results, err := openResults(ctx, opts.Results)
	if err != nil {
		return err
	}
	defer results.Close()
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := client.DialContext(dctx, worker.ClientOptions(client.Options{HostPort: opts.Temporal.Address, Namespace: namespace(opts.Temporal), Logger: sdklog.NewStructuredLogger(logger)}))
	if err != nil {
		return badInput(fmt.Errorf("cannot reach Temporal at %s: %w", opts.Temporal.Address, err))
	}
	defer c.Close()
	w := worker.NewWorker(c, worker.WorkerOptions{MaxTrials: opts.MaxTrials, Logger: logger, Results: results, StoreCalls: opts.Results.Calls})
	if err := w.Start(); err != nil {
		return err
	}
	defer w.Stop()
	fmt.Fprintf(opts.IO.Out, "worker: joined %s, task queue %s (trials on %s), up to %d trials at once; Ctrl-C stops\n", opts.Temporal.Address, run.TaskQueue, run.TrialTaskQueue(run.TaskQueue), opts.MaxTrials)
	<-ctx.Done()
	return nil
}

// checkMaxTrials refuses (exit 1) a --max-trials below 1 or past what this machine holds.
func checkMaxTrials(n int) error {
	if n < 1 {
		return badInput(fmt.Errorf("--max-trials must be 1 or more, got %d", n))
	}
	if msg := worker.CapacityProblem(n); msg != "" {
		return badInput(fmt.Errorf("--max-trials %d: %s; raise the limit, or lower --max-trials", n, msg))
	}
	return nil
}
