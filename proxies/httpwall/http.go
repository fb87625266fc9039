// Package httpwall is the wall served over HTTP: MCP streamable HTTP, REST tools, the
// record's events, and the protections every request passes first. MCP is at /mcp, REST
// at /tools/<name> with its OpenAPI description; protect refuses a Host off loopback,
// cross-site writes and, beyond loopback, a request without the bearer token. Other
// handlers (the model proxy at /llm) can be mounted beside them.
package httpwall

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/proxies/mcpwall"
)

// Handler serves every HTTP transport of the hub:
//
//	POST /mcp              MCP streamable HTTP
//	GET  /openapi.json     the REST tools described
//	GET  /tools            the tool list
//	POST /tools/<name>     one tool call, arguments as the JSON body
//	GET  /events           the record as it is written, one JSON row per line
//	GET  /healthz          200 while the hub is up
//
// Every route checks the Host and Origin of a request first (protect).
func Handler(h *hub.Hub) http.Handler { return protect(newMux(h, true), "") }

// TransportHeader tells the hub which transport a call came in on, when the wall
// bridges stdio to the hub's HTTP endpoint (stdio.Bridge).
const TransportHeader = "X-Chaos-Transport"

// newMux serves the hub's routes; fast lets the guard answer plain MCP tool calls
// itself (mcpwall.GuardHTTP), as it always does but in the tests that compare it with
// the SDK.
func newMux(h *hub.Hub, fast bool) *http.ServeMux {
	mux := http.NewServeMux()
	httpSrv, bridged := mcpwall.NewServer(h, "http"), mcpwall.NewServer(h, "stdio")
	servers := func(r *http.Request) *mcpwall.Server {
		if r.Header.Get(TransportHeader) == "stdio" {
			return bridged
		}
		return httpSrv
	}
	mcpHandler := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server { return servers(r).Server },
		&mcp.StreamableHTTPOptions{JSONResponse: true}) // a POST's answer as one JSON body, not an event stream
	var guardServers mcpwall.HTTPServers
	if fast {
		guardServers = servers
	}
	mux.Handle("/mcp", mcpwall.GuardHTTP(h, mcpHandler, guardServers))
	mux.HandleFunc("/openapi.json", func(w http.ResponseWriter, r *http.Request) {
		h.Contact("")
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(OpenAPI(h, baseURL(r)))
	})
	mux.HandleFunc("/tools", func(w http.ResponseWriter, r *http.Request) {
		h.Contact("")
		type tool struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		}
		var out []tool
		for _, t := range h.Tools() {
			out = append(out, tool{t.Name, t.Description, hub.InputSchema(t)})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(out)
	})
	mux.HandleFunc("/tools/", func(w http.ResponseWriter, r *http.Request) { serveREST(h, w, r) })
	mux.HandleFunc("/events", func(w http.ResponseWriter, r *http.Request) { serveEvents(h, w, r) })
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	return mux
}

func baseURL(r *http.Request) string { return "http://" + r.Host }

// serveEvents streams record rows, one JSON object per line, until the hub closes.
func serveEvents(h *hub.Hub, w http.ResponseWriter, r *http.Request) {
	rows, cancel := h.Subscribe()
	defer cancel()
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	if fl != nil {
		fl.Flush()
	}
	enc := json.NewEncoder(w)
	for {
		select {
		case <-r.Context().Done():
			return
		case row, ok := <-rows:
			if !ok {
				return
			}
			if enc.Encode(row) != nil {
				return
			}
			if fl != nil {
				fl.Flush()
			}
		}
	}
}

// Server is a hub served over HTTP on a loopback address.
type Server struct {
	Hub *hub.Hub
	// URL is the base URL ("http://127.0.0.1:PORT").
	URL      string
	srv      *http.Server
	done     chan struct{} // closed when Serve has returned serveErr
	serveErr error
}

// ModelPrefix is where a trial's server mounts the model proxy: {llm_url} is the
// server's URL and this prefix.
const ModelPrefix = "/llm"

// ServeConfig is where a hub is served and what else the same server serves.
type ServeConfig struct {
	// Addr is the address to listen on ("127.0.0.1:0" when empty).
	Addr string
	// Extra are handlers served beside the hub's own, by http.ServeMux pattern: the
	// model proxy under ModelPrefix+"/", for one. A pattern the hub serves already is
	// an error.
	Extra map[string]http.Handler
	// AllowRemote lets Addr be other than a loopback address; it needs Token.
	AllowRemote bool
	// Token, when set, is a bearer token every request must carry
	// (Authorization: Bearer TOKEN): 401 without it.
	Token string
}

// ErrNotLoopback is the refusal of a listen address off the loopback interface
// without AllowRemote and a token.
var ErrNotLoopback = errors.New("not a loopback address")

// checkListen refuses an address that serves more than loopback, unless cfg allows it.
func checkListen(cfg ServeConfig, addr string) error {
	if cfg.AllowRemote {
		if cfg.Token == "" {
			return fmt.Errorf("wall: serving %s beyond loopback needs a bearer token", addr)
		}
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("wall: listen address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("wall: listen on %q: %w", addr, ErrNotLoopback)
}

// protect is what every request to the wall's HTTP server passes first:
//
//   - Host: on a loopback listener, a Host that is not loopback is refused (403): a
//     page that rebinds its own name to 127.0.0.1 gets nothing (the SDK checks /mcp
//     so; here every route is checked, REST, the record's events and the model proxy too)
//   - Origin: a browser's cross-site request that can change state is refused (403),
//     by Sec-Fetch-Site or Origin (http.CrossOriginProtection); programs send neither
//   - a bearer token, when one is set (a wall served beyond loopback): 401 without it
func protect(next http.Handler, token string) http.Handler {
	cop := http.NewCrossOriginProtection()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token != "" {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="chaos wall"`)
				writeError(w, http.StatusUnauthorized, "this wall needs Authorization: Bearer TOKEN (the token it was started with)")
				return
			}
		} else if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && isLoopback(la.String()) && !isLoopback(r.Host) {
			writeError(w, http.StatusForbidden, fmt.Sprintf("invalid Host header %q: the wall answers only requests to a loopback address", r.Host))
			return
		}
		if err := cop.Check(r); err != nil {
			writeError(w, http.StatusForbidden, "cross-origin request refused: "+err.Error())
			return
		}
		next.ServeHTTP(w, r)
	})
}

// isLoopback: addr (host, or host:port) names the loopback interface.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// Serve starts serving the hub on addr ("127.0.0.1:0" when empty).
func Serve(h *hub.Hub, addr string) (*Server, error) {
	return ServeWith(h, ServeConfig{Addr: addr})
}

// ServeWith starts serving the hub, and cfg.Extra beside it, on cfg.Addr.
func ServeWith(h *hub.Hub, cfg ServeConfig) (*Server, error) {
	addr := cfg.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	mux := newMux(h, true)
	patterns := make([]string, 0, len(cfg.Extra))
	for p := range cfg.Extra {
		patterns = append(patterns, p)
	}
	sort.Strings(patterns)
	for _, p := range patterns {
		if err := handle(mux, p, cfg.Extra[p]); err != nil {
			return nil, fmt.Errorf("wall: serve %s: %w", p, err)
		}
	}
	if err := checkListen(cfg, addr); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("wall: listen on %s: %w", addr, err)
	}
	s := &Server{Hub: h, URL: "http://" + ln.Addr().String(), srv: &http.Server{Handler: protect(mux, cfg.Token), ReadHeaderTimeout: 10 * time.Second}, done: make(chan struct{})}
	go func() {
		s.serveErr = s.srv.Serve(ln)
		close(s.done)
	}()
	return s, nil
}

// handle is mux.Handle, with the panic of a conflicting or malformed pattern as an error.
func handle(mux *http.ServeMux, pattern string, h http.Handler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	if h == nil {
		return errors.New("no handler")
	}
	mux.Handle(pattern, h)
	return nil
}

// MCPURL is the URL of the streamable HTTP MCP endpoint.
func (s *Server) MCPURL() string { return s.URL + "/mcp" }

// Close stops serving (the hub stays open; close it with Hub.Close). It may be called
// more than once.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = s.srv.Close()
	}
	<-s.done
	if serr := s.serveErr; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
