package mcpwall

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/crashwall/chaos/proxies/hub"
)

// GuardHTTP answers a POST body that is too large, not JSON or not JSON-RPC with a
// JSON-RPC error, as the stdio guard does, instead of the SDK's plain-text 400, and
// records it in h's record. With servers (nil: none) it also hands a plain tool call in a
// session the SDK opened to that session's server's handler itself (fastcall_http.go).
func GuardHTTP(h *hub.Hub, next http.Handler, servers HTTPServers) http.Handler {
	var fast *httpSessions
	if servers != nil {
		fast = newHTTPSessions(servers)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			if r.Method == http.MethodDelete && fast != nil {
				fast.end(r.Header.Get(sessionIDHeader))
			}
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxMessageBytes))
		var msg jsonrpc.Message
		var resp []byte
		var reason string
		if err != nil {
			reason = fmt.Sprintf("message too large or unreadable: %v", err)
			resp = errorResponse(leadingID(body[:min(len(body), headBytes)]), -32600, reason)
		} else {
			msg, resp, reason = decodeLine(body)
		}
		if resp != nil {
			h.RecordError("http", reason)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write(resp)
			return
		}
		if fast != nil && fast.answer(w, r, msg, body) {
			return
		}
		// One message per POST: a request whose id the SDK would alter goes with an
		// alias in its place, put back in whatever the SDK answers (JSON or an event
		// stream), as on a stream (idTable).
		sent := body
		var out http.ResponseWriter = w
		aliased := false
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			ids := newIDTable()
			if name, start, end := ids.alias(body); name != "" {
				aliased = true
				quoted, _ := json.Marshal(name)
				body = append(append(append(make([]byte, 0, len(body)+len(quoted)), body[:start]...), quoted...), body[end:]...)
				out = &restoreIDWriter{ResponseWriter: w, ids: ids, name: name}
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		pw := &plainErrorWriter{ResponseWriter: out}
		var sdkOut http.ResponseWriter = pw
		if fast != nil {
			var after func()
			var refused bool
			if sdkOut, after, refused = fast.handing(pw, r, msg, aliased); refused {
				return
			}
			if after != nil {
				defer after()
			}
		}
		next.ServeHTTP(sdkOut, r)
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
	ids  *idTable
	name string
}

func (w *restoreIDWriter) WriteHeader(code int) {
	w.Header().Del("Content-Length") // the id may be longer than its alias
	w.ResponseWriter.WriteHeader(code)
}

func (w *restoreIDWriter) Write(p []byte) (int, error) {
	if _, err := w.ResponseWriter.Write(w.ids.restore(w.name, p, -1, false)); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (w *restoreIDWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// plainErrorWriter holds back the SDK's plain-text 400 for a message it will not handle
// (an unknown method, a request without params), so GuardHTTP can answer it with a
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
