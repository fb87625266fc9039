//go:build !noserver

package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/membership/static"
	"go.temporal.io/server/common/primitives"
	"go.temporal.io/server/temporal"
)

// Server is a running embedded Temporal server and, unless disabled, its web UI.
type Server struct {
	temporal     temporal.Server
	ui           *webUI // nil without UI
	frontendAddr string
	lock         *os.File
	logGate      *logGate
	closeLog     func() error

	stopOnce sync.Once
	stopErr  error
}

// startTimeout bounds a start-up whose context has no earlier deadline.
const startTimeout = time.Minute

// StartServer starts the embedded Temporal server described by cfg and returns once
// its frontend answers requests for cfg.Namespace (and the web UI its health check).
// ctx bounds the start-up only; the server runs until Stop.
func StartServer(ctx context.Context, cfg ServerConfig) (_ *Server, err error) {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	cfg, err = cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create the data directory: %w", err)
	}

	s := &Server{logGate: newLogGate(), closeLog: func() error { return nil }}
	// Undo whatever was started when a later step fails.
	defer func() {
		if err != nil {
			_ = s.Stop()
		}
	}()

	if s.lock, err = lockDataDir(cfg.DataDir); err != nil {
		return nil, err
	}
	logger, closeLog, err := serverLogger(cfg)
	if err != nil {
		return nil, err
	}
	s.closeLog = closeLog

	ports, err := pickPorts(cfg)
	if err != nil {
		return nil, err
	}
	s.frontendAddr = net.JoinHostPort(cfg.IP, strconv.Itoa(ports.frontend))

	var store config.Persistence
	if cfg.DB != "" {
		store, err = postgresStore(ctx, cfg, slogLogger{log: logger, gate: s.logGate})
	} else {
		store, err = sqliteStore(cfg)
	}
	if err != nil {
		return nil, err
	}
	identifyBinary() // before the server's own worker starts
	srv, err := temporal.NewServer(serverOptions(cfg, ports, store, slogLogger{log: logger, gate: s.logGate})...)
	if err != nil {
		return nil, fmt.Errorf("build the Temporal server: %w", err)
	}
	if err := srv.Start(); err != nil {
		return nil, fmt.Errorf("start the Temporal server: %w", err)
	}
	s.temporal = srv
	if err := waitFrontend(ctx, s.frontendAddr, cfg.Namespace); err != nil {
		return nil, err
	}

	if ports.ui != 0 {
		// Check again right before ui-server binds: it exits the process when it cannot.
		if err := checkPortFree(cfg.IP, ports.ui); err != nil {
			return nil, fmt.Errorf("web UI: %w", err)
		}
		if s.ui, err = startUI(ctx, cfg, ports.ui, s.frontendAddr); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// FrontendAddr is the host:port of the frontend gRPC API, for client.Options.HostPort.
func (s *Server) FrontendAddr() string { return s.frontendAddr }

// UIAddr is the web UI's URL, or "" when the UI is disabled.
func (s *Server) UIAddr() string {
	if s.ui == nil {
		return ""
	}
	return s.ui.url
}

// Stop stops the UI and the server, closes their ports and releases the data
// directory, so another server can start on it in this process or another. It is
// safe to call more than once.
//
// Temporal does not stop a few of its own system workers (the scanners and the
// parent-close-policy processor: "Nothing is gracefully stopping these workers" in
// its source), so about a hundred goroutines and some gRPC connections stay behind,
// retrying polls against the closed frontend with backoff. They log nothing after
// Stop. A later server on a free port never hears from them.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		var errs []error
		s.logGate.stopping() // shutdown warnings are routine
		defer s.logGate.stopped()
		if s.ui != nil {
			s.ui.stop()
		}
		if s.temporal != nil {
			if err := s.temporal.Stop(); err != nil {
				errs = append(errs, fmt.Errorf("stop the Temporal server: %w", err))
			}
		}
		if err := s.closeLog(); err != nil {
			errs = append(errs, fmt.Errorf("close the server log: %w", err))
		}
		if s.lock != nil {
			if err := s.lock.Close(); err != nil {
				errs = append(errs, fmt.Errorf("release the data directory: %w", err))
			}
		}
		s.stopErr = errors.Join(errs...)
	})
	return s.stopErr
}

// serverPorts are the ports of one embedded server. Only frontend and ui are
// reached from outside; the others carry the services' internal gRPC traffic.
type serverPorts struct {
	frontend, frontendHTTP, history, matching, worker int
	ui                                                int // 0: no UI
}

func pickPorts(cfg ServerConfig) (serverPorts, error) {
	var p serverPorts
	var err error
	if p.frontend, err = pickPort(cfg.IP, cfg.Port); err != nil {
		return p, fmt.Errorf("frontend: %w", err)
	}
	// The frontend's HTTP API serves Nexus; without it the server warns at every start.
	for _, port := range []*int{&p.frontendHTTP, &p.history, &p.matching, &p.worker} {
		if *port, err = freePort(cfg.IP); err != nil {
			return p, err
		}
	}
	if cfg.UIPort != NoUI {
		if p.ui, err = pickPort(cfg.IP, cfg.UIPort); err != nil {
			return p, fmt.Errorf("web UI: %w", err)
		}
	}
	return p, nil
}

// serverOptions assembles the Temporal server: all four services in this
// process, found through static hosts instead of a membership ring.
func serverOptions(cfg ServerConfig, ports serverPorts, store config.Persistence, logger slogLogger) []temporal.ServerOption {
	addr := func(port int) string { return net.JoinHostPort(cfg.IP, strconv.Itoa(port)) }
	service := func(port int) config.Service {
		var s config.Service
		s.RPC.GRPCPort = port
		s.RPC.BindOnIP = cfg.IP
		return s
	}

	conf := &config.Config{
		Persistence: store,
		ClusterMetadata: &cluster.Config{
			FailoverVersionIncrement: 10,
			MasterClusterName:        clusterName,
			CurrentClusterName:       clusterName,
			ClusterInformation: map[string]cluster.ClusterInformation{
				clusterName: {
					Enabled:                true,
					InitialFailoverVersion: 1,
					RPCAddress:             addr(ports.frontend),
					HTTPAddress:            addr(ports.frontendHTTP),
					// ClusterID left empty: the server makes one on first start
					// and keeps it in the database.
				},
			},
		},
		Services: map[string]config.Service{
			string(primitives.FrontendService): service(ports.frontend),
			string(primitives.HistoryService):  service(ports.history),
			string(primitives.MatchingService): service(ports.matching),
			string(primitives.WorkerService):   service(ports.worker),
		},
	}
	frontend := conf.Services[string(primitives.FrontendService)]
	frontend.RPC.HTTPPort = ports.frontendHTTP
	conf.Services[string(primitives.FrontendService)] = frontend
	conf.Global.Membership.MaxJoinDuration = 30 * time.Second
	conf.Global.Membership.BroadcastAddress = cfg.IP
	conf.DCRedirectionPolicy.Policy = "noop"
	conf.Archival.History.State = "disabled"
	conf.Archival.Visibility.State = "disabled"
	conf.NamespaceDefaults.Archival.History.State = "disabled"
	conf.NamespaceDefaults.Archival.Visibility.State = "disabled"
	// The server's own worker service (Schedules, batch operations) is a client of the frontend.
	conf.PublicClient.HostPort = addr(ports.frontend)

	return []temporal.ServerOption{
		temporal.WithConfig(conf),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithStaticHosts(map[primitives.ServiceName]static.Hosts{
			primitives.FrontendService: static.SingleLocalHost(addr(ports.frontend)),
			primitives.HistoryService:  static.SingleLocalHost(addr(ports.history)),
			primitives.MatchingService: static.SingleLocalHost(addr(ports.matching)),
			primitives.WorkerService:   static.SingleLocalHost(addr(ports.worker)),
		}),
		temporal.WithLogger(logger),
		temporal.WithDynamicConfigClient(dynamicConfig()),
	}
}

// dynamicConfig is the dev server's tuning, for one user on a laptop.
func dynamicConfig() dynamicconfig.StaticClient {
	return dynamicconfig.StaticClient{
		// New search attributes and Nexus endpoints are visible at once instead of
		// after a cache refresh; they are created rarely, so the extra reads are cheap...
		dynamicconfig.ForceSearchAttributesCacheRefreshOnRead.Key(): true,
		dynamicconfig.ForceNexusEndpointRefreshOnRead.Key():         true,
		// ...but they count against persistence rate limits, so raise those (the
		// Temporal CLI's numbers; SQLite's single connection is the real limit).
		dynamicconfig.FrontendPersistenceMaxQPS.Key(): 10000,
		dynamicconfig.HistoryPersistenceMaxQPS.Key():  45000,
		// Enough cached workflows for a run's trials, small enough for a laptop.
		dynamicconfig.HistoryCacheHostLevelMaxSize.Key(): 8096,
		// The history service reads its task queues at most 20 times a second by
		// default, which a cluster with many shards never notices; with one shard every
		// workflow and activity task of a trial waits for its turn, a dozen times a trial.
		// BenchmarkTrialOverhead measures it.
		dynamicconfig.TransferProcessorMaxPollRPS.Key():   1000,
		dynamicconfig.TimerProcessorMaxPollRPS.Key():      1000,
		dynamicconfig.VisibilityProcessorMaxPollRPS.Key(): 1000,
		// The web UI polls the workflow list.
		dynamicconfig.FrontendMaxNamespaceVisibilityRPSPerInstance.Key(): 100,
		// On by default in this server version; stated because chaos relies on them:
		// Schedules (chaos schedule) and workflow updates.
		dynamicconfig.FrontendEnableSchedules.Key():               true,
		dynamicconfig.WorkerEnableScheduler.Key():                 true,
		dynamicconfig.FrontendEnableUpdateWorkflowExecution.Key(): true,
	}
}

// waitFrontend returns once the frontend at addr passes its health check and
// knows namespace.
func waitFrontend(ctx context.Context, addr, namespace string) error {
	c, err := client.NewLazyClient(client.Options{
		HostPort:  addr,
		Namespace: namespace,
		Logger:    sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)),
	})
	if err != nil {
		return fmt.Errorf("connect to the Temporal frontend at %s: %w", addr, err)
	}
	defer c.Close()
	err = poll(ctx, func(ctx context.Context) error {
		if _, err := c.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
			return err
		}
		_, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: namespace})
		return err
	})
	if err != nil {
		return fmt.Errorf("wait for the Temporal frontend at %s: %w", addr, err)
	}
	return nil
}

// poll calls try until it succeeds or ctx ends, and returns try's last error
// with ctx's. Each try gets a short deadline so a hung call is retried.
func poll(ctx context.Context, try func(context.Context) error) error {
	const interval, perTry = 20 * time.Millisecond, 2 * time.Second
	for {
		tryCtx, cancel := context.WithTimeout(ctx, perTry)
		err := try(tryCtx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		case <-time.After(interval):
		}
	}
}
