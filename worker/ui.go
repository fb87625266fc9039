//go:build !noserver

package worker

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uioptions "github.com/temporalio/ui-server/v2/server/server_options"
)

// webUI is the Temporal web UI served next to the embedded frontend.
type webUI struct {
	srv  *uiserver.Server
	done chan struct{} // closed when the UI's serve loop has returned
	url  string
}

// startUI serves the web UI on ip:port for the frontend at frontendAddr and
// returns once it answers its health check.
//
// The port must be free: ui-server binds it itself and exits the process when it
// cannot, so the caller checks the port first.
func startUI(ctx context.Context, cfg ServerConfig, port int, frontendAddr string) (*webUI, error) {
	srv := uiserver.NewServer(uioptions.WithConfigProvider(&uiconfig.Config{
		Host:                cfg.IP,
		Port:                port,
		TemporalGRPCAddress: frontendAddr,
		EnableUI:            true,
		DefaultNamespace:    cfg.Namespace,
		// The UI is served over plain HTTP on a local address.
		CORS:     uiconfig.CORS{CookieInsecure: true},
		HideLogs: true,
	}))
	ui := &webUI{
		srv:  srv,
		done: make(chan struct{}),
		url:  "http://" + net.JoinHostPort(cfg.IP, strconv.Itoa(port)),
	}
	go func() {
		defer close(ui.done)
		_ = srv.Start() // returns nil once stopped; a bind failure exits inside ui-server
	}()

	health := ui.url + "/healthz"
	err := poll(ctx, func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, health, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s", health, resp.Status)
		}
		return nil
	})
	if err != nil {
		ui.stop()
		return nil, fmt.Errorf("wait for the web UI at %s: %w", ui.url, err)
	}
	return ui, nil
}

// stop closes the UI's listener and waits for its serve loop to return.
func (ui *webUI) stop() {
	ui.srv.Stop()
	<-ui.done
}
