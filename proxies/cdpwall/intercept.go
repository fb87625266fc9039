package cdpwall

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
)

// Event row types: what the browser did besides requests (the record's reader keeps
// rows of any type).
const (
	TypeTarget     = "cdp_target"
	TypeNavigation = "cdp_navigation"
)

// onEvent takes the guard's own connection's events, in order, on its reading goroutine.
func (g *Guard) onEvent(m message) {
	switch m.Method {
	case "Target.attachedToTarget":
		var ev target.EventAttachedToTarget
		if json.Unmarshal(m.Params, &ev) == nil && ev.TargetInfo != nil {
			go g.attached(ev)
		}
	case "Target.detachedFromTarget":
		var ev target.EventDetachedFromTarget
		if json.Unmarshal(m.Params, &ev) == nil {
			g.mu.Lock()
			for id, s := range g.targets {
				if s == string(ev.SessionID) {
					delete(g.targets, id)
				}
			}
			g.mu.Unlock()
		}
	case "Target.targetDestroyed":
		var ev target.EventTargetDestroyed
		if json.Unmarshal(m.Params, &ev) == nil {
			g.mu.Lock()
			seen := g.seen[string(ev.TargetID)]
			delete(g.seen, string(ev.TargetID))
			g.mu.Unlock()
			if seen {
				g.note(record.Row{Type: TypeTarget, Reason: "closed " + string(ev.TargetID)})
			}
		}
	case "Fetch.requestPaused":
		var ev fetch.EventRequestPaused
		if json.Unmarshal(m.Params, &ev) == nil && ev.Request != nil {
			go g.paused(m.SessionID, ev)
		}
	case "Page.frameNavigated":
		var ev page.EventFrameNavigated
		if json.Unmarshal(m.Params, &ev) == nil && ev.Frame != nil && ev.Frame.ParentID == "" {
			g.note(record.Row{Type: TypeNavigation, Reason: urlForRecord(ev.Frame.URL, spec.MatchAny(g.secret, ev.Frame.URL))})
		}
	}
}

// intercepts are the target types whose requests the guard intercepts; any other type
// (a dedicated worker, whose requests its page's session intercepts) is let run.
var intercepts = map[string]bool{"page": true, "iframe": true, "service_worker": true, "shared_worker": true}

// attached sets up the guard's session on a new target before it runs: interception of
// every request (writes must be seen to be denied) and the response stage of the
// intercepted URLs, auto-attach to its own children, page events. A target it cannot
// intercept is closed, never let run unguarded.
func (g *Guard) attached(ev target.EventAttachedToTarget) {
	ctx := g.ctx
	sess, t := string(ev.SessionID), ev.TargetInfo
	if intercepts[t.Type] || t.Type == "worker" {
		// The browser's own UI targets (browser_ui, other) are not the page's.
		g.mu.Lock()
		g.seen[string(t.TargetID)] = true
		g.mu.Unlock()
		g.note(record.Row{Type: TypeTarget, Reason: fmt.Sprintf("opened %s %s (%s)", t.Type, t.TargetID, urlForRecord(t.URL, spec.MatchAny(g.secret, t.URL)))})
	}
	if intercepts[t.Type] {
		if err := g.mon.call(ctx, sess, "Fetch.enable", map[string]any{"patterns": g.patterns()}, nil); err != nil {
			g.cfg.Hub.RecordError(Transport, fmt.Sprintf("%s: the %s target %s could not be intercepted (%v): closed", GuardLost, t.Type, t.TargetID, err))
			g.mon.call(ctx, "", "Target.closeTarget", map[string]any{"targetId": t.TargetID}, nil)
			return
		}
		g.mon.call(ctx, sess, "Target.setAutoAttach", autoAttach, nil)
		if t.Type == "page" || t.Type == "iframe" {
			g.mon.call(ctx, sess, "Page.enable", map[string]any{}, nil)
		}
		g.mu.Lock()
		g.targets[string(t.TargetID)] = sess
		g.mu.Unlock()
	}
	if ev.WaitingForDebugger {
		g.mon.call(ctx, sess, "Runtime.runIfWaitingForDebugger", map[string]any{}, nil)
	}
}

// patterns pause every request (so that a write anywhere can be denied) and the
// responses of the intercepted URLs (so that their answers are recorded).
func (g *Guard) patterns() []map[string]string {
	out := []map[string]string{{"urlPattern": "*", "requestStage": "Request"}}
	for _, p := range g.cfg.Rules.Intercept {
		out = append(out, map[string]string{"urlPattern": strings.ReplaceAll(p, "?", `\?`), "requestStage": "Response"})
	}
	return out
}

func isWrite(method string) bool {
	switch strings.ToUpper(method) {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

func postData(r *network.Request) []byte {
	var out []byte
	for _, e := range r.PostDataEntries {
		out = append(out, e.Bytes...)
	}
	return out
}

// paused decides one paused request: at the request stage the rules, then the fault (the
// family's faults.BrowserAnswer); at the response stage the record (and the answer of a
// fault that lets the write through).
func (g *Guard) paused(sess string, ev fetch.EventRequestPaused) {
	ctx := g.ctx
	id := ev.RequestID
	key := sess + "|" + string(id)
	u, method := ev.Request.URL, ev.Request.Method
	secret := spec.MatchAny(g.secret, u)
	if ev.ResponseStatusCode != 0 || ev.ResponseErrorReason != "" {
		g.responded(ctx, sess, key, ev)
		return
	}
	write := isWrite(method)
	args := requestArgs(method, u, postData(ev.Request), secret)
	if lost := g.Lost(); lost != "" {
		g.fail(ctx, sess, id)
		return
	}
	if write && !spec.MatchAny(g.allow, u) {
		g.note(record.Row{Type: record.TypeRejected, Args: args, Reason: "denied write: " + method + " to a URL not in browser.allow_writes", Status: 0})
		g.fail(ctx, sess, id)
		return
	}
	if !spec.MatchAny(g.intercept, u) {
		g.mon.call(ctx, sess, "Fetch.continueRequest", fetch.ContinueRequestParams{RequestID: id}, nil)
		return
	}
	p := pending{method: method, url: urlForRecord(u, secret), body: bodyForRecord(postData(ev.Request), secret), secret: secret}
	cond := g.cfg.Condition
	g.mu.Lock()
	var hit *faults.BrowserAnswer
	if write {
		g.writes++
		pos := faults.Position{Tool: spec.BrowserTool, Write: true, Call: g.writes, Target: g.writes, SinceWrite: g.writes}
		if b, ok := faults.Browser(cond.Family); ok && faults.Decide(g.cfg.Seed, cond, pos) {
			a := b.BrowserAnswer(cond)
			hit = &a
			if faults.EndsTheSession(cond.Family) {
				g.ended = hit
			}
		}
	}
	ended := g.ended
	g.mu.Unlock()
	if !cond.Clean() {
		p.hit = &record.Hit{Fired: false, Performed: true}
	}
	switch {
	case ended != nil:
		g.answer(ctx, sess, id, args, *ended)
		return
	case hit != nil && !hit.Send:
		g.answer(ctx, sess, id, args, *hit)
		return
	case hit != nil:
		p.answer = hit
		p.hit = &record.Hit{Fired: true, Family: cond.Family, How: hit.How, Performed: true}
	}
	g.mu.Lock()
	g.pending[key] = p
	g.mu.Unlock()
	if err := g.mon.call(ctx, sess, "Fetch.continueRequest", fetch.ContinueRequestParams{RequestID: id}, nil); err != nil {
		g.mu.Lock()
		delete(g.pending, key)
		g.mu.Unlock()
	}
}

// responded records an intercepted request's answer and lets it (or the fault's answer in
// its place) on to the page.
func (g *Guard) responded(ctx context.Context, sess, key string, ev fetch.EventRequestPaused) {
	g.mu.Lock()
	p, ok := g.pending[key]
	delete(g.pending, key)
	g.mu.Unlock()
	if !ok {
		g.mon.call(ctx, sess, "Fetch.continueRequest", fetch.ContinueRequestParams{RequestID: ev.RequestID}, nil)
		return
	}
	args := argsJSON(p.method, p.url, p.body)
	if ev.ResponseErrorReason != "" {
		g.note(record.Row{Type: record.TypeCall, Args: args, IsError: true, Reply: "network error: " + string(ev.ResponseErrorReason), Hit: p.hit})
		g.mon.call(ctx, sess, "Fetch.continueRequest", fetch.ContinueRequestParams{RequestID: ev.RequestID}, nil)
		return
	}
	var body struct {
		Body   string `json:"body"`
		Base64 bool   `json:"base64Encoded"`
	}
	g.mon.call(ctx, sess, "Fetch.getResponseBody", map[string]any{"requestId": ev.RequestID}, &body)
	raw := []byte(body.Body)
	if body.Base64 {
		raw, _ = base64.StdEncoding.DecodeString(body.Body)
	}
	status := int(ev.ResponseStatusCode)
	real := bodyForRecord(raw, p.secret)
	if a := p.answer; a != nil {
		g.note(record.Row{Type: record.TypeCall, Args: args, Reply: a.Body, Status: a.Status, IsError: a.Status >= 400,
			RealReply: fmt.Sprintf("%d %s", status, real), Hit: p.hit})
		g.fulfill(ctx, sess, ev.RequestID, a.Status, []byte(a.Body))
		return
	}
	g.note(record.Row{Type: record.TypeCall, Args: args, Reply: real, Status: status, IsError: status >= 400, Hit: p.hit})
	if err := g.mon.call(ctx, sess, "Fetch.continueResponse", map[string]any{"requestId": ev.RequestID}, nil); err != nil {
		g.fulfill(ctx, sess, ev.RequestID, status, raw)
	}
}

// answer answers a request the site never sees with the fault's answer. It is recorded
// before the page gets it: whoever reads the record once the page has moved on finds the
// call in it.
func (g *Guard) answer(ctx context.Context, sess string, id fetch.RequestID, args json.RawMessage, a faults.BrowserAnswer) {
	g.note(record.Row{Type: record.TypeCall, Args: args, Reply: a.Body, Status: a.Status, IsError: a.Status >= 400,
		Hit: &record.Hit{Fired: true, Family: g.cfg.Condition.Family, How: a.How, Performed: false}})
	g.fulfill(ctx, sess, id, a.Status, []byte(a.Body))
}

func (g *Guard) fulfill(ctx context.Context, sess string, id fetch.RequestID, status int, body []byte) {
	g.mon.call(ctx, sess, "Fetch.fulfillRequest", fetch.FulfillRequestParams{
		RequestID: id, ResponseCode: int64(status), Body: body,
		ResponseHeaders: []*fetch.HeaderEntry{{Name: "Content-Type", Value: "application/json"}, {Name: "Cache-Control", Value: "no-store"}},
	}, nil)
}

// fail blocks a request as the browser blocks one a client refused: net::ERR_BLOCKED_BY_CLIENT.
func (g *Guard) fail(ctx context.Context, sess string, id fetch.RequestID) {
	g.mon.call(ctx, sess, "Fetch.failRequest", fetch.FailRequestParams{RequestID: id, ErrorReason: network.ErrorReasonBlockedByClient}, nil)
}

func requestArgs(method, u string, body []byte, secret bool) json.RawMessage {
	return argsJSON(method, urlForRecord(u, secret), bodyForRecord(body, secret))
}

func argsJSON(method, u, body string) json.RawMessage {
	m := map[string]string{"method": method, "url": u}
	if body != "" {
		m["body"] = body
	}
	b, _ := json.Marshal(m)
	return b
}
