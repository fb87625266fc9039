package proxies

import (
	"bytes"
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

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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
func (h *Hub) Handler() http.Handler { return protect(h.mux(), "") }

func (h *Hub) mux() *http.ServeMux {
	mux := http.NewServeMux()
	httpSrv, bridged := NewMCPServer(h, "http"), NewMCPServer(h, "stdio")
	mcpHandler := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		if r.Header.Get(TransportHeader) == "stdio" {
			return bridged
		}
		return httpSrv
	}, &mcp.StreamableHTTPOptions{JSONResponse: true}) // a POST's answer as one JSON body, not an event stream
	mux.Handle("/mcp", h.guardHTTP(mcpHandler))
	mux.HandleFunc("/openapi.json", func(w http.ResponseWriter, r *http.Request) {
		h.contact("")
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(h.OpenAPI(baseURL(r)))
	})
	mux.HandleFunc("/tools", func(w http.ResponseWriter, r *http.Request) {
		h.contact("")
		type tool struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		}
		var out []tool
		for _, t := range h.Tools() {
			out = append(out, tool{t.Name, t.Description, InputSchema(t)})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(out)
	})
	mux.HandleFunc("/tools/", h.restHandler)
	mux.HandleFunc("/events", h.eventsHandler)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	return mux
}

func baseURL(r *http.Request) string { return "http://" + r.Host }

// guardHTTP answers a POST body that is too large, not JSON or not JSON-RPC with a
// JSON-RPC error, as the stdio guard does, instead of the SDK's plain-text 400.
func (h *Hub) guardHTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxMessageBytes))
		var resp []byte
		var reason string
		if err != nil {
			reason = fmt.Sprintf("message too large or unreadable: %v", err)
			resp = errorResponse(leadingID(body[:min(len(body), headBytes)]), -32600, reason)
		} else {
			resp, reason = CheckMessage(body)
		}
		if resp != nil {
			h.RecordError("http", reason)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write(resp)
			return
		}
		// One message per POST: an id the SDK would alter gets an alias of its own, put
		// back in whatever the SDK answers (JSON or an event stream).
		ids := newIDTable()
		sent := body
		body = ids.alias(body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		var out http.ResponseWriter = w
		if len(ids.aliases) > 0 {
			out = &restoreIDWriter{ResponseWriter: w, ids: ids}
		}
		pw := &plainErrorWriter{ResponseWriter: out}
		next.ServeHTTP(pw, r)
		if pw.plain {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write(rpcErrorFor(sent, strings.TrimSpace(pw.msg.String())))
		}
	})
}

// restoreIDWriter puts the client's id back where the SDK wrote its alias.
type restoreIDWriter struct {
	http.ResponseWriter
	ids *idTable
}

func (w *restoreIDWriter) WriteHeader(code int) {
	w.Header().Del("Content-Length") // the id may be longer than its alias
	w.ResponseWriter.WriteHeader(code)
}

func (w *restoreIDWriter) Write(p []byte) (int, error) {
	if _, err := w.ResponseWriter.Write(w.ids.restoreAll(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (w *restoreIDWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// plainErrorWriter holds back the SDK's plain-text 400 for a message it will not handle
// (an unknown method, a request without params), so guardHTTP can answer it with a
// JSON-RPC error as the stdio transport does.
type plainErrorWriter struct {
	http.ResponseWriter
	plain bool
	msg   bytes.Buffer
}

func (w *plainErrorWriter) WriteHeader(code int) {
	if code == http.StatusBadRequest && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.plain = true
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *plainErrorWriter) Write(p []byte) (int, error) {
	if w.plain {
		return w.msg.Write(p)
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach Flush on the real writer (SSE replies).
func (w *plainErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// rpcErrorFor is the JSON-RPC error for the SDK's refusal msg of message body, with the
// request's id: method not found for a method it does not handle, else invalid request.
func rpcErrorFor(body []byte, msg string) []byte {
	code := int64(jsonrpc.CodeInvalidRequest)
	if strings.HasPrefix(msg, "JSON RPC not handled") {
		code = jsonrpc.CodeMethodNotFound
	}
	var id json.RawMessage
	if m, err := jsonrpc.DecodeMessage(body); err == nil {
		if req, ok := m.(*jsonrpc.Request); ok && req.ID.IsValid() {
			id = leadingID(body)
		}
	}
	return errorResponse(id, code, msg)
}

// eventsHandler streams record rows, one JSON object per line, until the hub closes.
func (h *Hub) eventsHandler(w http.ResponseWriter, r *http.Request) {
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
	Hub *Hub
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
func Serve(h *Hub, addr string) (*Server, error) {
	return ServeWith(h, ServeConfig{Addr: addr})
}

// ServeWith starts serving the hub, and cfg.Extra beside it, on cfg.Addr.
func ServeWith(h *Hub, cfg ServeConfig) (*Server, error) {
	addr := cfg.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	mux := h.mux()
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
