package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/proxies/httpwall"
	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/proxies/stdio"
	"github.com/crashwall/chaos/proxies/upstream"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/trial"
)

// WallOptions are the inputs of `chaos wall`.
type WallOptions struct {
	IO        *IOStreams
	Hub       string
	Spec      string
	Condition string
	Record    string
	Seed      int64
	Listen    string
	// AllowRemote lets Listen be beyond loopback, with the bearer token in $CHAOS_WALL_TOKEN.
	AllowRemote bool
	// Getenv reads the environment (os.Getenv when nil).
	Getenv func(string) string
}

// WallTokenEnv holds the bearer token of `chaos wall --listen ADDR --allow-remote`. It is
// read from the environment, never a flag, so it is not in the process list.
const WallTokenEnv = "CHAOS_WALL_TOKEN"

// NewCmdWall builds `chaos wall`, the command an agent starts as its MCP server.
func NewCmdWall(ios *IOStreams, runF func(context.Context, *WallOptions) error) *cobra.Command {
	opts := &WallOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "wall (--hub URL | --spec SPEC [--condition ID] [--record PATH])",
		Short: "Serve the wall's tools over MCP on stdin/stdout (the command an agent starts as its MCP server)",
		Long: `chaos wall speaks MCP over stdin and stdout.

With --hub it bridges to a running hub (what chaos run puts in {wall}): the hub keeps
the world, the fault and the record. Standalone, with --spec, it runs its own hub with
the condition you name (default clean) and writes the record to --record.

The record always ends with a session_end row holding the final state: when the client
closes stdin (after every request read before it is answered and recorded), and on
SIGINT, SIGTERM or SIGHUP. With --listen, a closed stdin ends only the stdio session: the
wall serves HTTP until it gets a signal, so it can run in the background
(chaos wall --spec S --listen 127.0.0.1:0 </dev/null &).

--listen also serves MCP over HTTP and REST, on a loopback address only: requests for
another Host, cross-site requests from a browser and REST bodies not sent as
application/json are refused. An address beyond loopback (0.0.0.0:8080, a LAN address)
is refused unless you pass --allow-remote and put a bearer token in $` + WallTokenEnv + `:
every request must then carry "Authorization: Bearer TOKEN" (401 without it).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if (opts.Hub == "") == (opts.Spec == "") {
				return badInput(errors.New("give either --hub URL (bridge to a running hub) or --spec SPEC (run a hub here)"))
			}
			if opts.AllowRemote && opts.Listen == "" {
				return badInput(errors.New("--allow-remote goes with --listen ADDR"))
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return wallRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Hub, "hub", "", "URL of a running hub to bridge to")
	cmd.Flags().StringVar(&opts.Spec, "spec", "", "experiment spec to serve standalone")
	cmd.Flags().StringVar(&opts.Condition, "condition", faults.CleanID, "condition to arm (see chaos faults SPEC)")
	cmd.Flags().StringVar(&opts.Record, "record", "", "where to write the record (JSONL); none when empty")
	cmd.Flags().Int64Var(&opts.Seed, "seed", 0, "trial seed (default: the spec's seed)")
	cmd.Flags().StringVar(&opts.Listen, "listen", "", "also serve MCP over HTTP and REST on this loopback address (e.g. 127.0.0.1:0); the URL is printed on stderr")
	cmd.Flags().BoolVar(&opts.AllowRemote, "allow-remote", false, "let --listen be beyond loopback; every request must then carry the bearer token in $"+WallTokenEnv)
	return cmd
}

func wallRun(ctx context.Context, opts *WallOptions) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if opts.Hub != "" {
		return stdio.Bridge(ctx, opts.Hub, opts.IO.In, opts.IO.Out)
	}
	s, err := spec.Load(opts.Spec)
	if err != nil {
		return badInput(err)
	}
	trial.LearnSecrets(s) // the record holds none of the values
	var src hub.ToolSource
	if len(s.Servers) > 0 { // real servers behind the wall: reach them here
		up, err := upstream.OpenUpstream(ctx, upstream.UpstreamConfig{Spec: s})
		if err != nil {
			return badInput(err)
		}
		defer up.Close()
		s, src = up.Spec(), up
	}
	conds, err := faults.Generate(s)
	if err != nil {
		return badInput(err)
	}
	cond, ok := faults.Find(conds, opts.Condition)
	if !ok {
		return badInput(fmt.Errorf("unknown condition %q for %s (see chaos faults %s)", opts.Condition, s.Name, opts.Spec))
	}
	seed := opts.Seed
	if seed == 0 {
		seed = s.Seed
	}
	rec := record.Discard()
	if opts.Record != "" {
		if rec, err = record.Open(opts.Record); err != nil {
			return err
		}
	}
	hub, err := hub.NewHub(hub.Config{Spec: s, Condition: cond, Seed: seed, Trial: "standalone", Record: rec, Source: src})
	if err != nil {
		return err
	}
	if opts.Listen != "" {
		cfg := httpwall.ServeConfig{Addr: opts.Listen, AllowRemote: opts.AllowRemote}
		if opts.AllowRemote {
			getenv := opts.Getenv
			if getenv == nil {
				getenv = os.Getenv
			}
			if cfg.Token = getenv(WallTokenEnv); len(cfg.Token) < 16 {
				hub.Close("the wall could not listen: no token")
				return badInput(fmt.Errorf("--allow-remote needs a bearer token of at least 16 characters in $%s: every request must carry it", WallTokenEnv))
			}
		}
		srv, err := httpwall.ServeWith(hub, cfg)
		if err != nil {
			hub.Close("the wall could not listen: " + err.Error())
			// The address is the user's: taken, malformed or not loopback, it is theirs to fix.
			if errors.Is(err, httpwall.ErrNotLoopback) {
				return badInput(fmt.Errorf("%w: use 127.0.0.1:PORT, or pass --allow-remote with a bearer token in $%s (the wall has no other authentication)", err, WallTokenEnv))
			}
			return badInput(err)
		}
		defer srv.Close()
		fmt.Fprintf(opts.IO.ErrOut, "chaos wall: MCP at %s, REST at %s/tools\n", srv.MCPURL(), srv.URL)
	}

	// Every ending closes the record with the final state: the client closing stdin
	// (ServeStdio returns), or a signal (the process would otherwise die mid-row).
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	done := make(chan error, 1)
	go func() { done <- stdio.ServeStdio(ctx, hub, opts.IO.In, opts.IO.Out) }()
	select {
	case err := <-done:
		reason := "client closed stdin"
		if err != nil {
			reason = "transport error: " + err.Error()
		}
		if err == nil && opts.Listen != "" {
			// Started in the background (stdin closed or /dev/null), the wall is an HTTP
			// server: it serves until it is stopped.
			fmt.Fprintln(opts.IO.ErrOut, "chaos wall: stdin closed; still serving HTTP until stopped (SIGINT or SIGTERM)")
			select {
			case sig := <-sigs:
				hub.Close("signal: " + sig.String())
				return &ExitError{Code: 128 + int(sig.(syscall.Signal)), Err: fmt.Errorf("stopped by %s; the record is closed", sig)}
			case <-ctx.Done():
				return stopWall(ctx, hub)
			}
		}
		if cerr := hub.Close(reason); err == nil {
			err = cerr
		}
		return err
	case sig := <-sigs:
		hub.Close("signal: " + sig.String())
		return &ExitError{Code: 128 + int(sig.(syscall.Signal)), Err: fmt.Errorf("stopped by %s; the record is closed", sig)}
	case <-ctx.Done():
		return stopWall(ctx, hub)
	}
}

// stopWall closes the record when the command's context ends. A signal that the root
// context caught (SIGINT, SIGTERM) reaches the wall's own channel too, and either may
// be seen first: both end in 128+N.
func stopWall(ctx context.Context, h *hub.Hub) error {
	if sig, ok := stoppedBy(ctx); ok {
		h.Close("signal: " + sig.String())
		return &ExitError{Code: 128 + int(sig), Err: fmt.Errorf("stopped by %s; the record is closed", sig)}
	}
	h.Close("stopped: " + context.Cause(ctx).Error())
	return nil
}
