// Package cdpwall is the browser wall: a guard in front of Chromium's DevTools protocol
// (CDP). The agent connects to the guard ({cdp_url}) instead of the browser; the guard
// passes its CDP messages on, refusing the methods and clicks the spec denies, while its
// own connection to the browser attaches to every target (Target.setAutoAttach, flat
// sessions) and intercepts the page's requests (Fetch): writes the spec does not allow
// are blocked, the armed fault hits the page's writes, and every intercepted request is
// recorded through hub.Hub (transport "cdp"). It fails closed: a guard that loses the
// browser, or a target it cannot intercept, blocks rather than lets a write through.
//
//	agent ──CDP ws──> guard (deny methods, clicks) ──────────────> Chromium ──HTTP──> site
//	                  guard's own session per target: Fetch.requestPaused ─┘
//	                        rules ─> faults.Decide ─> fulfill / fail / continue ─> hub.Record
package cdpwall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/coder/websocket"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
)

// Transport is the record's name for the browser wall.
const Transport = "cdp"

// GuardLost starts the reason of the record's error row when the guard loses the browser
// or a target (docs/browser.md#fail-closed).
const GuardLost = "guard_lost"

// Config is what a guard needs.
type Config struct {
	Hub *hub.Hub
	// Browser is the browser's own debugging address (http://127.0.0.1:PORT).
	Browser   string
	Rules     *spec.Browser
	Condition faults.Condition
	Seed      int64
	// OnLost is called once, on its own goroutine, when the guard loses the browser: the
	// trial's browser is then ended so nothing runs unguarded (nil: nothing more is done).
	OnLost func(reason string)
}

// Guard is one trial's CDP guard.
type Guard struct {
	cfg        Config
	intercept  []spec.Glob
	allow      []spec.Glob
	secret     []spec.Glob
	clicks     []spec.Glob
	deny       []string
	browserURL *url.URL

	mon    *conn
	ctx    context.Context
	cancel context.CancelFunc
	ln     net.Listener
	srv    *http.Server
	url    string

	mu       sync.Mutex
	writes   int                   // writes to intercepted URLs so far
	ended    *faults.BrowserAnswer // a fault that ends the session has fired: every intercepted request gets its answer
	lost     string                // why the guard lost the browser ("" : it has not)
	targets  map[string]string     // target id -> the guard's session on it
	seen     map[string]bool       // targets recorded as opened
	pending  map[string]pending    // session|request id -> the request, awaiting its response
	clients  map[*websocket.Conn]struct{}
	lostOnce sync.Once
}

// pending is an intercepted request between its request and response stages.
type pending struct {
	method, url, body string
	secret            bool
	answer            *faults.BrowserAnswer // a fault's answer in place of the site's (the request is sent for real)
	hit               *record.Hit
}

// Start connects the guard to the browser, attaches to its targets and serves {cdp_url}
// on a loopback port.
func Start(ctx context.Context, cfg Config) (*Guard, error) {
	if cfg.Hub == nil || cfg.Rules == nil {
		return nil, errors.New("cdpwall: a guard needs the trial's hub and the spec's browser section")
	}
	bu, err := url.Parse(cfg.Browser)
	if err != nil || bu.Host == "" {
		return nil, fmt.Errorf("cdpwall: the browser address %q is not http://HOST:PORT", cfg.Browser)
	}
	ws, err := browserWS(ctx, cfg.Browser)
	if err != nil {
		return nil, fmt.Errorf("reach the browser at %s: %w", cfg.Browser, err)
	}
	mon, err := dialConn(ctx, ws)
	if err != nil {
		return nil, fmt.Errorf("connect to the browser at %s: %w", ws, err)
	}
	allow := cfg.Rules.AllowWrites
	if len(allow) == 0 {
		allow = cfg.Rules.Intercept
	}
	g := &Guard{
		cfg: cfg, browserURL: bu, mon: mon,
		intercept: spec.CompileGlobs(cfg.Rules.Intercept), allow: spec.CompileGlobs(allow),
		secret: spec.CompileGlobs(cfg.Rules.SecretURLs), clicks: spec.CompileGlobs(cfg.Rules.DenyClicks),
		deny:    cfg.Rules.DenyMethods,
		targets: map[string]string{}, seen: map[string]bool{}, pending: map[string]pending{}, clients: map[*websocket.Conn]struct{}{},
	}
	g.ctx, g.cancel = context.WithCancel(context.Background())
	go func() {
		err := mon.run(g.ctx, g.onEvent)
		if g.ctx.Err() == nil {
			g.lose(fmt.Sprintf("the guard's connection to the browser ended (%v)", err))
		}
	}()
	if err := mon.call(ctx, "", "Target.setDiscoverTargets", map[string]any{"discover": true}, nil); err != nil {
		g.Close()
		return nil, fmt.Errorf("watch the browser's targets: %w", err)
	}
	if err := mon.call(ctx, "", "Target.setAutoAttach", autoAttach, nil); err != nil {
		g.Close()
		return nil, fmt.Errorf("attach to the browser's targets: %w", err)
	}
	g.ln, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		g.Close()
		return nil, err
	}
	g.url = "http://" + g.ln.Addr().String()
	mux := http.NewServeMux()
	mux.HandleFunc("/json/version", g.serveVersion)
	mux.HandleFunc("/json/version/", g.serveVersion)
	mux.HandleFunc("/json", g.serveList)
	mux.HandleFunc("/json/list", g.serveList)
	mux.HandleFunc("/json/list/", g.serveList)
	mux.HandleFunc("/devtools/", g.serveWS)
	g.srv = &http.Server{Handler: loopbackOnly(mux)}
	go g.srv.Serve(g.ln)
	return g, nil
}

var autoAttach = map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true}

// URL is {cdp_url}: the guard's http://127.0.0.1:PORT.
func (g *Guard) URL() string { return g.url }

// Lost is why the guard lost the browser, "" while it has not.
func (g *Guard) Lost() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.lost
}

// Close ends the guard: its server, every agent connection and its own connection.
func (g *Guard) Close() error {
	g.cancel()
	if g.srv != nil {
		g.srv.Close()
	}
	g.mu.Lock()
	for c := range g.clients {
		c.Close(websocket.StatusGoingAway, "the trial has ended")
	}
	g.mu.Unlock()
	g.mon.close()
	return nil
}

// lose fails closed: it records guard_lost, cuts every agent connection, refuses new
// ones and the page's requests, and tells the trial (which ends the browser).
func (g *Guard) lose(reason string) {
	g.lostOnce.Do(func() {
		g.mu.Lock()
		g.lost = reason
		clients := make([]*websocket.Conn, 0, len(g.clients))
		for c := range g.clients {
			clients = append(clients, c)
		}
		g.mu.Unlock()
		g.cfg.Hub.RecordError(Transport, GuardLost+": "+reason)
		for _, c := range clients {
			c.Close(websocket.StatusInternalError, "chaos: the browser guard lost the browser")
		}
		if g.cfg.OnLost != nil {
			go g.cfg.OnLost(reason)
		}
	})
}

// note writes a row of the browser wall into the trial's record.
func (g *Guard) note(row record.Row) {
	row.Transport = Transport
	if row.Tool == "" {
		row.Tool = spec.BrowserTool
	}
	g.cfg.Hub.Record(row)
}

// loopbackOnly refuses a request whose Host is not a loopback name (a page that rebinds
// its DNS to 127.0.0.1 must not drive the browser), as Chromium itself does.
func loopbackOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		host = strings.Trim(host, "[]")
		ip := net.ParseIP(host)
		if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			http.Error(w, "chaos: the browser guard answers loopback hosts only", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (g *Guard) serveVersion(w http.ResponseWriter, r *http.Request) {
	var v map[string]any
	if err := getJSON(r.Context(), g.cfg.Browser+"/json/version", &v); err != nil {
		http.Error(w, "chaos: the browser guard cannot reach the browser: "+err.Error(), http.StatusBadGateway)
		return
	}
	if ws, ok := v["webSocketDebuggerUrl"].(string); ok {
		v["webSocketDebuggerUrl"] = g.wsURL(r, ws)
	}
	writeJSON(w, v)
}

func (g *Guard) serveList(w http.ResponseWriter, r *http.Request) {
	var list []map[string]any
	if err := getJSON(r.Context(), g.cfg.Browser+"/json/list", &list); err != nil {
		http.Error(w, "chaos: the browser guard cannot reach the browser: "+err.Error(), http.StatusBadGateway)
		return
	}
	for _, t := range list {
		if ws, ok := t["webSocketDebuggerUrl"].(string); ok {
			t["webSocketDebuggerUrl"] = g.wsURL(r, ws)
		}
		delete(t, "devtoolsFrontendUrl") // the front end would talk to the browser itself
		delete(t, "devtoolsFrontendUrlCompat")
	}
	writeJSON(w, list)
}

// wsURL is a browser WebSocket URL pointed back at the guard, on the host the client used.
func (g *Guard) wsURL(r *http.Request, browserWS string) string {
	u, err := url.Parse(browserWS)
	if err != nil {
		return ""
	}
	u.Host = r.Host
	return u.String()
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	json.NewEncoder(w).Encode(v)
}
