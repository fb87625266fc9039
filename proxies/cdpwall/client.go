package cdpwall

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
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

	a := &agentConn{g: g, c: c, up: up, sessions: map[string]string{}, denied: map[string]denial{}}
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
	denied   map[string]denial // session id -> the click just denied there, while it is repeated
}

// denial is a denied click being repeated to the agent's script calls.
type denial struct {
	why     string
	repeats int
}

// maxRepeats bounds how many script calls a denied click answers.
const maxRepeats = 3

// deniedClick starts the reason a click is refused with.
const deniedClick = "denied click"

// repeatDenial answers the agent's next script calls (Runtime.callFunctionOn, at most
// maxRepeats) on the session of a denied click with the denial as the script's
// exception, in place of running them. Playwright retries a click whose input event
// fails, whatever the error, until its timeout; only a script's exception ends its
// retries (or a closed session). Its next script calls after the failed click are the
// hit-target check's end (whose error it ignores) and the retry's look-up of the element
// (whose exception ends the click): so a Playwright agent's click on a denied element
// fails at once, with the rule that denied it. Any input event on the session ends the
// repeats.
func (a *agentConn) repeatDenial(m message) []byte {
	a.smu.Lock()
	defer a.smu.Unlock()
	d, ok := a.denied[m.SessionID]
	switch {
	case !ok:
		return nil
	case strings.HasPrefix(m.Method, "Input."):
		delete(a.denied, m.SessionID)
		return nil
	case m.Method != "Runtime.callFunctionOn":
		return nil
	}
	if d.repeats++; d.repeats >= maxRepeats {
		delete(a.denied, m.SessionID)
	} else {
		a.denied[m.SessionID] = d
	}
	why := d.why
	err := map[string]any{"type": "object", "subtype": "error", "className": "Error", "description": "Error: chaos: " + why}
	ans, _ := json.Marshal(map[string]any{"id": m.ID, "sessionId": m.SessionID, "result": map[string]any{
		"result":           err,
		"exceptionDetails": map[string]any{"exceptionId": 1, "text": "Uncaught", "lineNumber": 0, "columnNumber": 0, "exception": err},
	}})
	return ans
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
		m, err := readCommand(b)
		if err != nil {
			// Fail closed: what the guard cannot read, it cannot judge.
			why := err.Error() + " is refused: the guard passes on only commands it can read"
			a.g.note(record.Row{Type: record.TypeRejected, Args: json.RawMessage(`{"method":""}`), Reason: why})
			ans, _ := json.Marshal(message{ID: m.ID, Error: &cdpError{Code: -32600, Message: "chaos: " + why}})
			if a.toAgent(ctx, ans) != nil {
				return
			}
			continue
		}
		if ans := a.repeatDenial(m); ans != nil {
			if a.toAgent(ctx, ans) != nil {
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
		if why := a.g.refuse(ctx, a, m, "", 0); why != "" {
			a.g.note(record.Row{Type: record.TypeRejected, Args: methodArgs(m), Reason: why})
			if strings.HasPrefix(why, deniedClick) && m.Method == "Input.dispatchMouseEvent" {
				a.smu.Lock()
				a.denied[m.SessionID] = denial{why: why}
				a.smu.Unlock()
			}
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

// refuse says why an agent's command is denied ("" : it is let through). A command
// that carries another (envelope.go) is judged by each it carries, down to the
// innermost; target is the target an envelope named ("": the session's).
func (g *Guard) refuse(ctx context.Context, a *agentConn, m message, target string, depth int) string {
	if g.Lost() != "" {
		return "the browser guard lost the browser (" + GuardLost + ")"
	}
	if why, ok := unguarded[m.Method]; ok {
		return fmt.Sprintf("%s is refused: %s", m.Method, why)
	}
	for _, d := range g.deny {
		if d == m.Method || (strings.HasSuffix(d, ".*") && strings.HasPrefix(m.Method, strings.TrimSuffix(d, "*"))) {
			return fmt.Sprintf("denied method %s (browser.deny_methods: %s)", m.Method, d)
		}
	}
	if slices.Contains(navigators, m.Method) {
		if why := privilegedScheme(m.Params); why != "" {
			return fmt.Sprintf("%s is refused: %s", m.Method, why)
		}
	}
	if m.Method == envelopeMethod {
		if depth == maxEnvelopes {
			return fmt.Sprintf("%s nested more than %d deep", envelopeMethod, maxEnvelopes)
		}
		in, tid, err := inner(m)
		if err != nil {
			return err.Error() + " is refused: the guard judges the command inside"
		}
		if why := g.refuse(ctx, a, in, tid, depth+1); why != "" {
			return why + " (carried in " + envelopeMethod + ")"
		}
		return ""
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
		if strictParams(m.Params, &p) != nil {
			return "a mouse event the guard cannot read"
		}
		if p.Type != "mousePressed" && p.Type != "mouseReleased" {
			return ""
		}
		tid, ok := target, target != ""
		if !ok {
			a.smu.Lock()
			tid, ok = a.sessions[m.SessionID]
			a.smu.Unlock()
		}
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
				return fmt.Sprintf(deniedClick+" on %q (browser.deny_clicks: %s)", label, g.cfg.Rules.DenyClicks[i])
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
