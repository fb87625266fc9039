package cdpwall

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/coder/websocket"

	"github.com/crashwall/chaos/record"
)

// serveWS is one agent connection (/devtools/browser/ID or /devtools/page/ID): its own
// connection to the same endpoint of the browser, the agent's messages checked on the way
// in, the browser's passed back as they are.
func (g *Guard) serveWS(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.URL.Path, "/devtools/browser/") && !strings.HasPrefix(r.URL.Path, "/devtools/page/") {
		http.NotFound(w, r)
		return
	}
	if lost := g.Lost(); lost != "" {
		http.Error(w, "chaos: the browser guard lost the browser: "+lost, http.StatusBadGateway)
		return
	}
	up, _, err := websocket.Dial(r.Context(), "ws://"+g.browserURL.Host+r.URL.Path, nil)
	if err != nil {
		http.Error(w, "chaos: the browser guard cannot reach the browser: "+err.Error(), http.StatusBadGateway)
		return
	}
	up.SetReadLimit(maxMessage)
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		up.CloseNow()
		return
	}
	c.SetReadLimit(maxMessage)
	g.mu.Lock()
	g.clients[c] = struct{}{}
	g.mu.Unlock()
	g.cfg.Hub.Contact("cdp.connect")
	defer func() {
		g.mu.Lock()
		delete(g.clients, c)
		g.mu.Unlock()
		c.CloseNow()
		up.CloseNow()
	}()

	a := &agentConn{g: g, c: c, up: up, sessions: map[string]string{}}
	if id, ok := strings.CutPrefix(r.URL.Path, "/devtools/page/"); ok {
		a.sessions[""] = id
	}
	ctx, cancel := context.WithCancel(g.ctx)
	defer cancel()
	go func() {
		defer cancel()
		a.fromBrowser(ctx)
	}()
	a.fromAgent(ctx)
}

// agentConn is one agent connection and what the guard knows of its sessions.
type agentConn struct {
	g     *Guard
	c, up *websocket.Conn
	wmu   sync.Mutex // writes to c come from both directions (denials are answered here)

	smu      sync.Mutex
	sessions map[string]string // the agent's session id -> its target id
}

func (a *agentConn) toAgent(ctx context.Context, b []byte) error {
	a.wmu.Lock()
	defer a.wmu.Unlock()
	return a.c.Write(ctx, websocket.MessageText, b)
}

func (a *agentConn) fromBrowser(ctx context.Context) {
	for {
		typ, b, err := a.up.Read(ctx)
		if err != nil {
			return
		}
		if bytes.Contains(b, []byte(`"Target.attachedToTarget"`)) {
			var m struct {
				Params struct {
					SessionID  string `json:"sessionId"`
					TargetInfo struct {
						TargetID string `json:"targetId"`
					} `json:"targetInfo"`
				} `json:"params"`
			}
			if json.Unmarshal(b, &m) == nil && m.Params.SessionID != "" {
				a.smu.Lock()
				a.sessions[m.Params.SessionID] = m.Params.TargetInfo.TargetID
				a.smu.Unlock()
			}
		}
		a.wmu.Lock()
		err = a.c.Write(ctx, typ, b)
		a.wmu.Unlock()
		if err != nil {
			return
		}
	}
}

func (a *agentConn) fromAgent(ctx context.Context) {
	for {
		typ, b, err := a.c.Read(ctx)
		if err != nil {
			return
		}
		var m message
		if json.Unmarshal(b, &m) != nil || m.Method == "" {
			// Not a command: the browser answers it as it answers any bad message.
			if a.up.Write(ctx, typ, b) != nil {
				return
			}
			continue
		}
		if m.Method == "Browser.close" && m.SessionID == "" {
			// The browser is the trial's, and the guard's eyes: an agent that closes it is
			// disconnected as if it had closed, and the browser stays for the probes.
			a.g.note(record.Row{Type: record.TypeRejected, Args: methodArgs(m), Reason: "Browser.close: the agent's connection was closed, the trial's browser kept"})
			ans, _ := json.Marshal(message{ID: m.ID, Result: json.RawMessage(`{}`)})
			a.toAgent(ctx, ans)
			return
		}
		if why := a.g.refuse(ctx, a, m); why != "" {
			a.g.note(record.Row{Type: record.TypeRejected, Args: methodArgs(m), Reason: why})
			ans, _ := json.Marshal(message{ID: m.ID, SessionID: m.SessionID, Error: &cdpError{Code: -32000, Message: "chaos: " + why}})
			if a.toAgent(ctx, ans) != nil {
				return
			}
			continue
		}
		if a.up.Write(ctx, typ, b) != nil {
			return
		}
	}
}

// methodArgs is a refused command as the record keeps it: the method and, for a mouse
// event, where it landed; never the other params (they may hold what was typed).
func methodArgs(m message) json.RawMessage {
	out := map[string]any{"method": m.Method}
	if m.Method == "Input.dispatchMouseEvent" {
		var p struct {
			Type string  `json:"type"`
			X    float64 `json:"x"`
			Y    float64 `json:"y"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			out["type"], out["x"], out["y"] = p.Type, p.X, p.Y
		}
	}
	b, _ := json.Marshal(out)
	return b
}

// refuse says why an agent's command is denied ("" : it is let through).
func (g *Guard) refuse(ctx context.Context, a *agentConn, m message) string {
	if g.Lost() != "" {
		return "the browser guard lost the browser (" + GuardLost + ")"
	}
	for _, d := range g.deny {
		if d == m.Method || (strings.HasSuffix(d, ".*") && strings.HasPrefix(m.Method, strings.TrimSuffix(d, "*"))) {
			return fmt.Sprintf("denied method %s (browser.deny_methods: %s)", m.Method, d)
		}
	}
	if m.Method == "Fetch.continueRequest" || m.Method == "Fetch.continueResponse" {
		// The agent's own interception runs beside the guard's: it may let a request go
		// on, never rewrite one the guard has already checked.
		var p map[string]json.RawMessage
		json.Unmarshal(m.Params, &p)
		for _, k := range []string{"url", "method", "postData", "headers"} {
			if _, ok := p[k]; ok {
				return fmt.Sprintf("%s may not rewrite a request's %s (the guard checks requests as the page sends them)", m.Method, k)
			}
		}
	}
	if m.Method == "Input.dispatchMouseEvent" && len(g.clicks) > 0 {
		var p struct {
			Type string  `json:"type"`
			X    float64 `json:"x"`
			Y    float64 `json:"y"`
		}
		if json.Unmarshal(m.Params, &p) != nil {
			return "a mouse event the guard cannot read"
		}
		if p.Type != "mousePressed" && p.Type != "mouseReleased" {
			return ""
		}
		a.smu.Lock()
		tid, ok := a.sessions[m.SessionID]
		a.smu.Unlock()
		if !ok {
			return "a click on a target the guard does not know"
		}
		label, err := g.labelAt(ctx, tid, p.X, p.Y)
		if err != nil {
			// Fail closed: a click whose element cannot be read may be a denied one.
			return fmt.Sprintf("a click the guard could not check (%v)", err)
		}
		for i, c := range g.clicks {
			if c.Match(label) {
				return fmt.Sprintf("denied click on %q (browser.deny_clicks: %s)", label, g.cfg.Rules.DenyClicks[i])
			}
		}
	}
	return ""
}

// labelJS is the label a person reads on the element under the pointer: the nearest
// button, link or input's aria-label, text, value or title.
const labelJS = `function() {
  let e = this;
  while (e && e.nodeType !== 1) e = e.parentNode;
  if (!e) return "";
  const b = e.closest('button,a,[role=button],input,label,summary,select,option') || e;
  const v = b.getAttribute('aria-label') || b.innerText || b.value || b.title || '';
  return String(v).trim().slice(0, 200);
}`

// labelAt reads the label of the element at (x, y) of a target through the guard's own
// session: DOM.getNodeForLocation (the browser's hit test, not the page's script), then
// the label of that node.
func (g *Guard) labelAt(ctx context.Context, targetID string, x, y float64) (string, error) {
	g.mu.Lock()
	sess, ok := g.targets[targetID]
	g.mu.Unlock()
	if !ok {
		return "", fmt.Errorf("no guard session on target %s", targetID)
	}
	if err := g.mon.call(ctx, sess, "DOM.getDocument", map[string]any{"depth": 0}, nil); err != nil {
		return "", err
	}
	var hit struct {
		BackendNodeID int64 `json:"backendNodeId"`
	}
	if err := g.mon.call(ctx, sess, "DOM.getNodeForLocation", map[string]any{"x": int(x), "y": int(y), "includeUserAgentShadowDOM": false, "ignorePointerEventsNone": true}, &hit); err != nil {
		return "", err
	}
	var obj struct {
		Object struct {
			ObjectID string `json:"objectId"`
		} `json:"object"`
	}
	if err := g.mon.call(ctx, sess, "DOM.resolveNode", map[string]any{"backendNodeId": hit.BackendNodeID, "objectGroup": "chaos-guard"}, &obj); err != nil {
		return "", err
	}
	defer g.mon.call(ctx, sess, "Runtime.releaseObjectGroup", map[string]any{"objectGroup": "chaos-guard"}, nil)
	var res struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
		Exception json.RawMessage `json:"exceptionDetails"`
	}
	if err := g.mon.call(ctx, sess, "Runtime.callFunctionOn", map[string]any{"objectId": obj.Object.ObjectID, "functionDeclaration": labelJS, "returnByValue": true}, &res); err != nil {
		return "", err
	}
	if len(res.Exception) > 0 {
		return "", fmt.Errorf("reading the label failed")
	}
	s, _ := res.Result.Value.(string)
	return s, nil
}
