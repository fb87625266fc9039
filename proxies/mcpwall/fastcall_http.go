package mcpwall

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK's streamable HTTP handler spends most of a loopback tool call's time on its
// own: it decodes the message four times (each with a 32 KiB buffer made and zeroed)
// and hands it to the session's goroutines and back, many times Hub.Call's own cost
// (BenchmarkToolCall; the figures are in docs/ARCHITECTURE.md). For a session the SDK
// opened and initialized, GuardHTTP hands a POST of one plain tools/call straight to the
// session's server's own method handler (Server.methodHandler), as the stream guard does, and writes
// its answer as the SDK's handler would (the same status, headers and bytes;
// TestFastHTTPSameAnswers):
//
//	POST /mcp ──guard──> tools/call {name, arguments}, live session ──> server's handler ──> JSON answer
//	                     anything else (initialize, lists, pings, notifications, GET,
//	                     DELETE, unknown sessions, _meta, odd ids or headers) ──> SDK's HTTP handler
//
// The guard learns a session from the SDK's answer to its initialize (the
// Mcp-Session-Id it hands out, the protocol version agreed) and forgets it when the
// client deletes it or the SDK ends it. It keeps the ids of the calls in flight on
// either path, so that an id reused while its call is unanswered is refused as the SDK
// refuses it, whichever path has the first. What it checks of the HTTP request and
// writes back mirrors the SDK's handler (v1.8.0: serveStatefulPOST, servePOST);
// TestFastHTTPSameAnswers and FuzzFastHTTP compare the two, so an SDK upgrade that
// changes either shows there.

// HTTPServers names, for the request that opens a session, the wall server whose MCP
// server the SDK's handler gives that session (its getServer). With it GuardHTTP hands
// the session's plain tool calls to that server's handler; the SDK's handler it guards
// must answer a POST with one JSON body (StreamableHTTPOptions.JSONResponse), as the
// guard does.
type HTTPServers func(r *http.Request) *Server

// The SDK's header names.
const (
	sessionIDHeader       = "Mcp-Session-Id"
	protocolVersionHeader = "Mcp-Protocol-Version"
	lastEventIDHeader     = "Last-Event-ID"
)

// httpSessions are the sessions the SDK serves that the guard answers calls for.
type httpSessions struct {
	servers HTTPServers

	mu   sync.Mutex
	live map[string]*httpSession // by Mcp-Session-Id
}

// httpSession is one session the SDK opened and initialized.
type httpSession struct {
	call     mcp.MethodHandler  // the server's handler (Server.methodHandler)
	ss       *mcp.ServerSession // the SDK's session
	protocol string             // the version initialize agreed on
	ctx      context.Context    // ends with the session, as the SDK's calls do
	cancel   context.CancelFunc

	// Guarded by httpSessions.mu: the calls in flight, the guard's (with their
	// cancellation) and the SDK's (how many POSTs carry that id); and queued, the
	// notifications the SDK took (202) that its session has not handled yet.
	fast   map[jsonrpc.ID]context.CancelFunc
	sdk    map[jsonrpc.ID]int
	queued int
	owner  *httpSessions
}

// The SDK answers a POSTed notification 202 at once and hands it to its session's
// goroutine, which handles it before any message sent after it. A call the guard
// handed over would overtake it: a DELETE right after could end the session with
// the notification never handled, so never counted (Hub.Contact), and the SDK's own
// order (notifications/initialized before the calls) would not hold. So while a
// session has a notification queued, its calls go to the SDK too, behind it; the
// wall's receiving middleware (countContacts) tells the guard when the session has
// handled it (noticed). A notification the SDK takes but never hands to the middleware
// (params it cannot read) leaves its session's calls with the SDK: slower, never wrong.
var guardedSessions sync.Map // *mcp.ServerSession -> *httpSession

// noticed tells the guard that ss has handled a notification (countContacts).
func noticed(ss mcp.Session) {
	v, ok := guardedSessions.Load(ss)
	if !ok {
		return
	}
	sess := v.(*httpSession)
	sess.owner.mu.Lock()
	if sess.queued > 0 {
		sess.queued--
	}
	sess.owner.mu.Unlock()
}

func newHTTPSessions(servers HTTPServers) *httpSessions {
	return &httpSessions{servers: servers, live: map[string]*httpSession{}}
}

func (s *httpSessions) lookup(id string) *httpSession {
	if id == "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live[id]
}

// end forgets session id (the client deleted it, or the SDK ended it) and ends the
// calls the guard is answering in it, as the SDK ends its own.
func (s *httpSessions) end(id string) {
	s.mu.Lock()
	sess := s.live[id]
	delete(s.live, id)
	s.mu.Unlock()
	if sess != nil {
		sess.cancel()
	}
}

// answer hands r to its session's server's handler, writes the answer and reports true
// when r is a plain tools/call in a live session that the SDK would take as it comes;
// else r goes to the SDK.
func (s *httpSessions) answer(w http.ResponseWriter, r *http.Request, msg jsonrpc.Message, body []byte) bool {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.Method != "tools/call" || !req.IsCall() {
		return false
	}
	sess := s.lookup(r.Header.Get(sessionIDHeader))
	if sess == nil || !sess.takes(r) {
		return false
	}
	if start, end, ok := topLevelID(body); !ok || !echoedAsSent(body[start:end]) {
		return false // an id the SDK gets as an alias (GuardHTTP)
	}
	call := plainCall(sess.ss, req)
	if call == nil {
		return false
	}
	s.mu.Lock()
	if _, dup := sess.fast[req.ID]; dup {
		s.mu.Unlock()
		writeDuplicateID(w, req.ID)
		return true
	}
	if sess.sdk[req.ID] > 0 || sess.queued > 0 {
		s.mu.Unlock()
		return false // the SDK refuses it itself, or handles it behind a notification
	}
	ctx, cancel := context.WithCancel(sess.ctx)
	sess.fast[req.ID] = cancel
	s.mu.Unlock()

	resp := answerCall(ctx, sess.call, req.ID, call)
	data, err := jsonrpc.EncodeMessage(resp)
	// As the SDK does, the id is free again before the answer is written: the client
	// may reuse it as soon as it has the answer.
	s.mu.Lock()
	delete(sess.fast, req.ID)
	s.mu.Unlock()
	cancel()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return true
	}
	w.Header().Set("Cache-Control", "no-cache, no-transform")
	w.Header().Set("Content-Type", "application/json")
	w.Write(data)
	return true
}

// takes says whether the SDK would take r's headers for this session as they are
// (serveStatefulPOST, servePOST): a JSON body, an Accept of both JSON and an event
// stream, no Last-Event-ID, and the version initialize agreed on, or none. A request it
// would refuse goes to it, to be refused in its words.
func (sess *httpSession) takes(r *http.Request) bool {
	if v := r.Header.Values(protocolVersionHeader); len(v) > 1 || len(v) == 1 && v[0] != sess.protocol {
		return false
	}
	if len(r.Header.Values(lastEventIDHeader)) > 0 {
		return false
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return false
	}
	jsonOK, streamOK := accepts(r.Header.Values("Accept"))
	return jsonOK && streamOK
}

// accepts is the SDK's reading of the Accept header (streamableAccepts).
func accepts(values []string) (jsonOK, streamOK bool) {
	for _, value := range values {
		for _, raw := range strings.Split(value, ",") {
			base, _, _ := strings.Cut(strings.TrimSpace(raw), ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}

// writeDuplicateID refuses a call whose id is in flight in its session, in the SDK's
// words and headers.
func writeDuplicateID(w http.ResponseWriter, id jsonrpc.ID) {
	data, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{
		Code:    jsonrpc.CodeInvalidRequest,
		Message: fmt.Sprintf("duplicate in-flight request ID %v", id.Raw()),
	}})
	w.Header().Set("Cache-Control", "no-cache, no-transform")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	w.Write(data)
}

// handing notes what a message the SDK is about to be handed means for the guard's
// sessions, and returns what to call once the SDK has answered it (nil for nothing):
//
//   - a call in a live session: its id is in flight until the SDK answers; one whose id
//     the guard is answering is refused here, as the SDK would refuse it (refused is
//     true), unless the SDK gets it aliased (a 1.0 beside a 1: the SDK sees another id)
//   - a notification in a live session: queued until the session has handled it, so
//     that the session's calls go to the SDK meanwhile (guardedSessions)
//   - notifications/cancelled of a call the guard is answering: that call's context ends
//   - initialize without a session: the session the SDK opens is learnt from its answer
//     (w is then wrapped to read the answer)
func (s *httpSessions) handing(w http.ResponseWriter, r *http.Request, msg jsonrpc.Message, aliased bool) (out http.ResponseWriter, after func(), refused bool) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return w, nil, false
	}
	sessionID := r.Header.Get(sessionIDHeader)
	if sessionID == "" {
		if req.Method != "initialize" || !req.IsCall() {
			return w, nil, false
		}
		iw := &initWriter{statusWriter: statusWriter{ResponseWriter: w}}
		return iw, func() { s.learn(r, iw) }, false
	}
	sess := s.lookup(sessionID)
	if sess == nil {
		return w, nil, false
	}
	if !req.IsCall() {
		if req.Method == "notifications/cancelled" {
			s.cancelCall(sess, req.Params)
		}
		// Queued until the session has handled it (noticed), unless the SDK does not
		// take it (anything but 202: it never reaches the session).
		s.mu.Lock()
		sess.queued++
		s.mu.Unlock()
		sw := &statusWriter{ResponseWriter: w}
		return sw, func() {
			if sw.status != http.StatusAccepted {
				s.mu.Lock()
				if sess.queued > 0 {
					sess.queued--
				}
				s.mu.Unlock()
			}
		}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := sess.fast[req.ID]; dup && !aliased && sess.takes(r) {
		writeDuplicateID(w, req.ID)
		return w, nil, true
	}
	sess.sdk[req.ID]++
	return w, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if sess.sdk[req.ID]--; sess.sdk[req.ID] <= 0 {
			delete(sess.sdk, req.ID)
		}
	}, false
}

// cancelCall ends the context of the call the guard is answering that a
// notifications/cancelled names, as the SDK ends its own (the call still answers).
func (s *httpSessions) cancelCall(sess *httpSession, params json.RawMessage) {
	id, ok := cancelledID(params)
	if !ok {
		return
	}
	s.mu.Lock()
	cancel := sess.fast[id]
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// learn opens the fast path for the session the SDK opened with its answer to an
// initialize: its Mcp-Session-Id, and the protocol version the answer agrees on.
func (s *httpSessions) learn(r *http.Request, iw *initWriter) {
	id := iw.Header().Get(sessionIDHeader)
	if id == "" || iw.status != http.StatusOK || !strings.HasPrefix(iw.Header().Get("Content-Type"), "application/json") {
		return
	}
	var answer struct {
		Result *struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	if json.Unmarshal(iw.body, &answer) != nil || answer.Result == nil || answer.Result.ProtocolVersion == "" {
		return
	}
	srv := s.servers(r)
	if srv == nil {
		return
	}
	var ss *mcp.ServerSession
	for cand := range srv.Sessions() {
		if cand.ID() == id {
			ss = cand
			break
		}
	}
	if ss == nil {
		return // ended already
	}
	ctx, cancel := context.WithCancel(context.Background())
	sess := &httpSession{call: srv.methodHandler(), ss: ss, protocol: answer.Result.ProtocolVersion, ctx: ctx, cancel: cancel,
		fast: map[jsonrpc.ID]context.CancelFunc{}, sdk: map[jsonrpc.ID]int{}, owner: s}
	s.mu.Lock()
	s.live[id] = sess
	s.mu.Unlock()
	guardedSessions.Store(ss, sess)
	go func() {
		ss.Wait()
		guardedSessions.Delete(ss)
		s.end(id)
	}()
}

// initWriter keeps the status and the body of the SDK's answer to an initialize.
type initWriter struct {
	statusWriter
	body []byte
}

// maxInitAnswer bounds what initWriter keeps: an initialize answer is a few hundred
// bytes.
const maxInitAnswer = 64 << 10

func (w *initWriter) Write(p []byte) (int, error) {
	if len(w.body)+len(p) <= maxInitAnswer {
		w.body = append(w.body, p...)
	}
	return w.statusWriter.Write(p)
}

// statusWriter keeps the status the SDK answers a notification with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
