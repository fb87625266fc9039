package httpwall

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/proxies/mcpwall"
)

// serveREST serves POST /tools/<name> with the arguments as the JSON body: 200 with
// the reply, the tool's failure status (503, 401) with its message, 400 for a body that
// is not a JSON object or does not match the schema, 404 for an unknown tool, 415 for a
// body not sent as JSON.
func serveREST(h *hub.Hub, w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/tools/")
	h.Contact("")
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("use POST /tools/%s with the arguments as a JSON object", name))
		return
	}
	// Only JSON: a browser sends text/plain, a form or no type at all without asking
	// first (no CORS preflight), and such a request must never reach a tool.
	if !isJSONType(r.Header.Get("Content-Type")) {
		writeError(w, http.StatusUnsupportedMediaType, fmt.Sprintf("Content-Type %q: send the arguments as a JSON object with Content-Type: application/json", r.Header.Get("Content-Type")))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, mcpwall.MaxMessageBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body too large: the limit is %d bytes", mbe.Limit))
			return
		}
		writeError(w, http.StatusBadRequest, "could not read the body: "+err.Error())
		return
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		body = []byte("{}")
	}
	reply, err := h.Call(r.Context(), "rest", name, body)
	if err != nil {
		var ce *hub.CallError
		if errors.As(err, &ce) {
			writeError(w, ce.Status, ce.Msg)
			return
		}
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	status := reply.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, reply.Text)
}

// isJSONType: a media type of JSON (application/json, or a +json type such as
// application/merge-patch+json), parameters allowed.
func isJSONType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// OpenAPI is the OpenAPI 3.1 description of the hub's REST tools.
func OpenAPI(h *hub.Hub, baseURL string) map[string]any {
	paths := map[string]any{}
	errResp := map[string]any{"content": map[string]any{"application/json": map[string]any{"schema": map[string]any{
		"type": "object", "properties": map[string]any{"error": map[string]any{"type": "string"}}}}}}
	for _, t := range h.Tools() {
		var schema any
		_ = json.Unmarshal(hub.InputSchema(t), &schema)
		paths["/tools/"+t.Name] = map[string]any{"post": map[string]any{
			"operationId": t.Name,
			"summary":     t.Description,
			"requestBody": map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{"schema": schema}}},
			"responses": map[string]any{
				"200": map[string]any{"description": "the tool's reply", "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{}}}},
				"400": withDesc(errResp, "the body is not a JSON object or does not match the schema"),
				"401": withDesc(errResp, "the session has ended"),
				"404": withDesc(errResp, "no such tool"),
				"415": withDesc(errResp, "the body is not sent as application/json"),
				"503": withDesc(errResp, "the tool failed"),
			},
		}}
	}
	doc := map[string]any{
		"openapi": "3.1.0",
		"info":    map[string]any{"title": "chaos wall: " + h.Spec().Name, "version": hub.Version},
		"paths":   paths,
	}
	if baseURL != "" {
		doc["servers"] = []any{map[string]any{"url": baseURL}}
	}
	return doc
}

func withDesc(m map[string]any, d string) map[string]any {
	out := map[string]any{"description": d}
	for k, v := range m {
		out[k] = v
	}
	return out
}
