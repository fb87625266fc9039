// Package upstream is the tool source of real MCP servers behind the wall, over stdio,
// streamable HTTP or HTTP+SSE. It finds and classifies their tools, forwards the calls the
// hub performs, fabricates the successes a fault needs from real ones seen before, and
// serves them to a desktop agent as `chaos proxy serve` does (docs/upstream.md).
package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/proxies/internal/procgroup"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/world"
)

// UpstreamConfig is what OpenUpstream needs. Nil and zero fields take their defaults.
type UpstreamConfig struct {
	// Spec holds the servers and the simulated tools served beside them.
	Spec *spec.Spec
	// Sandbox fills in {sandbox} in the servers' commands, arguments and environment, and
	// is where a stdio server runs ("": the current directory; Discover: a temporary one).
	Sandbox string
	// Lookup reads the ${VAR}s of env, headers and URLs (default os.LookupEnv).
	Lookup func(string) (string, bool)
	// ConnectTimeout bounds starting a server and its handshake (default 2 minutes: an npm server on a machine at load 45 takes tens of seconds);
	// CallTimeout bounds one forwarded call (default 60s).
	ConnectTimeout time.Duration
	CallTimeout    time.Duration
	// OnFailure is told, once per server, when a server fails during the trial (it exits,
	// stops answering, answers garbage). The hub records it; the trial has no verdict.
	OnFailure func(reason string)
}

// Upstream is real MCP servers behind the wall, as a ToolSource: it serves the union of
// their tools (and the spec's simulated ones), forwards a performed call, never forwards a
// fabricated one, and remembers the replies it saw so that a fabricated success or a stale
// read looks like the real thing.
//
//	Hub.Call ──Perform──> Upstream ──MCP (stdio | streamable HTTP | HTTP+SSE)──> real server
//	         ──Skip─────> Upstream.Fabricate (a success seen earlier; nothing is sent)
type Upstream struct {
	spec        *spec.Spec
	sim         *world.World
	conns       []*upstreamConn
	tools       []spec.Tool
	byName      map[string]spec.Tool
	classes     []Classification
	red         redactor
	callTimeout time.Duration
	onFailure   func(string)

	mu     sync.Mutex
	seen   map[string][]exchange // successful replies, per tool
	reads  map[string][]exchange // successful read replies with the writes before them
	writes int                   // writes that reached a server
	failed string
	closed bool
}

// exchange is one call the wall forwarded and its reply.
type exchange struct {
	args   map[string]any
	reply  world.Reply
	writes int
}

type upstreamConn struct {
	server  spec.Server
	session *mcp.ClientSession
	cmd     *exec.Cmd // a stdio server's process, whose group close ends
	stderr  *tailWriter
	tools   []*mcp.Tool
	gone    string
}

const (
	defaultConnectTimeout = 2 * time.Minute
	defaultCallTimeout    = 60 * time.Second
	// keepSeen bounds the replies remembered per tool.
	keepSeen = 16
)

// OpenUpstream starts or reaches every server of the spec, lists their tools and
// classifies them. A server that cannot be reached is an error naming it and saying why;
// the servers already reached are closed.
func OpenUpstream(ctx context.Context, cfg UpstreamConfig) (*Upstream, error) {
	if cfg.Spec == nil {
		return nil, errors.New("upstream: no spec")
	}
	u := &Upstream{
		callTimeout: cfg.CallTimeout, onFailure: cfg.OnFailure,
		seen: map[string][]exchange{}, reads: map[string][]exchange{}, byName: map[string]spec.Tool{},
	}
	if u.callTimeout <= 0 {
		u.callTimeout = defaultCallTimeout
	}
	connectTimeout := cfg.ConnectTimeout
	if connectTimeout <= 0 {
		connectTimeout = defaultConnectTimeout
	}
	sandbox := cfg.Sandbox
	if sandbox == "" {
		sandbox, _ = os.Getwd()
	}

	// The simulated tools stay as they are; tools a previous Discover added are found again.
	simSpec := *cfg.Spec
	simSpec.Tools = nil
	for _, t := range cfg.Spec.Tools {
		if t.Server == "" {
			simSpec.Tools = append(simSpec.Tools, t)
		}
	}
	u.sim = world.New(&simSpec)

	for _, s := range cfg.Spec.Servers {
		e, err := resolve(s, sandbox, cfg.Lookup)
		if err != nil {
			u.Close()
			return nil, err
		}
		u.red = append(u.red, e.secrets...)
		c, err := u.connect(ctx, e, sandbox, connectTimeout)
		if err != nil {
			u.Close()
			return nil, err
		}
		u.conns = append(u.conns, c)
	}
	u.serve(&simSpec)
	return u, nil
}

// Discover reaches the spec's servers once, to learn their tools, and returns the spec
// with those tools added (each with its effect and server) and how each was classified.
// A spec without servers is returned as it is.
func Discover(ctx context.Context, s *spec.Spec, cfg UpstreamConfig) (*spec.Spec, []Classification, error) {
	if len(s.Servers) == 0 {
		return s, nil, nil
	}
	cfg.Spec = s
	if cfg.Sandbox == "" {
		// A server that keeps its data under {sandbox} must not touch anyone's while it is
		// only asked for its tools.
		dir, err := os.MkdirTemp("", "chaos-discover-")
		if err != nil {
			return nil, nil, err
		}
		defer os.RemoveAll(dir)
		cfg.Sandbox = dir
	}
	u, err := OpenUpstream(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	defer u.Close()
	return u.Spec(), u.Classifications(), nil
}

// connect starts (stdio) or reaches (streamable HTTP, SSE) one server and lists its tools.
func (u *Upstream) connect(ctx context.Context, e endpoint, sandbox string, timeout time.Duration) (*upstreamConn, error) {
	c := &upstreamConn{server: e.server, stderr: &tailWriter{max: 2048}}
	var t mcp.Transport
	if e.server.Stdio() {
		path, err := exec.LookPath(e.argv[0])
		if err != nil {
			return nil, fmt.Errorf("%s: cannot start %q: %v", describeServer(e.server), e.argv[0], errors.Unwrap(err))
		}
		cmd := exec.Command(path, e.argv[1:]...)
		cmd.Env = append(os.Environ(), e.env...)
		if fi, err := os.Stat(sandbox); err == nil && fi.IsDir() {
			cmd.Dir = sandbox
		}
		cmd.Stderr = c.stderr
		procgroup.Own(cmd)
		c.cmd = cmd
		t = &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
	} else {
		hc := &http.Client{Transport: headersTransport{headers: e.headers, host: hostOf(e.url)}}
		if e.server.SSE() {
			t = &sseTransport{inner: &mcp.SSEClientTransport{Endpoint: e.url, HTTPClient: hc}}
		} else {
			t = &mcp.StreamableClientTransport{Endpoint: e.url, HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true}
		}
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "chaos-wall", Version: hub.Version}, nil)
	cs, err := client.Connect(cctx, t, nil)
	if err != nil {
		procgroup.Kill(c.cmd)
		return nil, u.connectError(e.server, c, "did not answer the MCP handshake", err, cctx)
	}
	c.session = cs
	var cursor string
	for {
		res, err := cs.ListTools(cctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			cs.Close()
			procgroup.Kill(c.cmd)
			return nil, u.connectError(e.server, c, "did not list its tools", err, cctx)
		}
		c.tools = append(c.tools, res.Tools...)
		if res.NextCursor == "" || len(res.Tools) == 0 {
			break
		}
		cursor = res.NextCursor
	}
	if len(c.tools) == 0 {
		cs.Close()
		procgroup.Kill(c.cmd)
		return nil, fmt.Errorf("%s has no tools", describeServer(e.server))
	}
	return c, nil
}

func (u *Upstream) connectError(s spec.Server, c *upstreamConn, what string, err error, ctx context.Context) error {
	why := err.Error()
	if ctx.Err() != nil {
		why = "no answer in time (" + ctx.Err().Error() + ")"
	}
	msg := fmt.Sprintf("%s %s: %s", describeServer(s), what, why)
	if tail := c.stderr.String(); tail != "" {
		msg += "; it printed: " + tail
	}
	switch {
	case s.Stdio():
	case !s.SSE() && (strings.Contains(why, "405") || strings.Contains(why, "Method Not Allowed") || strings.Contains(why, "Not Found") ||
		strings.HasSuffix(strings.TrimRight(displayURL(s.URL), "/"), "/sse")):
		msg += " (if the server speaks only the older HTTP+SSE transport, set transport: sse; see docs/upstream.md)"
	case s.SSE() && (strings.Contains(why, "failed to connect") || strings.Contains(why, "missing endpoint")):
		msg += " (with transport: sse the url must be the server's SSE endpoint, which answers GET with an event stream; for a streamable HTTP server leave transport out)"
	}
	return errors.New(u.red.redact(msg))
}

// serve builds the tool list: the simulated tools, then each server's, prefixed
// server__tool only where a name is taken more than once.
func (u *Upstream) serve(simSpec *spec.Spec) {
	count := map[string]int{}
	for _, t := range simSpec.Tools {
		count[t.Name]++
	}
	for _, c := range u.conns {
		for _, t := range c.tools {
			count[t.Name]++
		}
	}
	u.tools = slices.Clone(simSpec.Tools)
	for _, c := range u.conns {
		for _, mt := range c.tools {
			name := mt.Name
			if count[name] > 1 {
				name = c.server.Name + "__" + mt.Name
			}
			effect, from := Classify(c.server, mt)
			t := spec.Tool{Name: name, Description: mt.Description, Effect: effect, Server: c.server.Name, Remote: mt.Name}
			if mt.InputSchema != nil {
				if b, err := json.Marshal(mt.InputSchema); err == nil {
					t.InputSchema = b
				}
			}
			if mt.Annotations != nil {
				if b, err := json.Marshal(mt.Annotations); err == nil {
					t.Annotations = b
				}
			}
			if o, ok := c.server.Tools[mt.Name]; ok {
				t.Reply, t.Hints = o.Reply, o.Hints
			}
			u.tools = append(u.tools, t)
			u.classes = append(u.classes, Classification{Tool: name, Server: c.server.Name, Remote: mt.Name, Effect: effect, From: from})
		}
	}
	for _, t := range u.tools {
		u.byName[t.Name] = t
	}
	s := *simSpec
	s.Tools = slices.Clone(u.tools)
	u.spec = &s
}

// Spec is the spec with the servers' tools added to its tools.
func (u *Upstream) Spec() *spec.Spec { return u.spec }

// Classifications say what each server tool was taken to do, and why.
func (u *Upstream) Classifications() []Classification { return slices.Clone(u.classes) }

// Tools are the tools served: the simulated ones, then the servers'.
func (u *Upstream) Tools() []spec.Tool { return u.tools }

// Tool returns the tool with that name.
func (u *Upstream) Tool(name string) (spec.Tool, bool) {
	t, ok := u.byName[name]
	return t, ok
}

// State is the simulated part of the world; the servers' state is read by probes.
func (u *Upstream) State() map[string]any { return u.sim.State() }

// Failure is why a server failed during the trial ("" when none did).
func (u *Upstream) Failure() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.failed
}

// Call runs a call in a mode: Perform forwards it to the tool's server, Skip never
// forwards and answers a fabricated success. The simulated world's modes (store empty,
// store elsewhere) cannot be done to a real server and answer an error.
func (u *Upstream) Call(ctx context.Context, t spec.Tool, args map[string]any, mode world.Mode) world.Reply {
	if t.Server == "" {
		return u.sim.Call(ctx, t, args, mode)
	}
	switch mode {
	case world.Skip:
		return u.Fabricate(t, args)
	case world.Perform:
	default:
		return world.Failure(500, "chaos: this fault needs the simulated world; a real server cannot be made to store elsewhere or store nothing")
	}
	reply := u.forward(ctx, t, args)
	u.note(t, args, reply)
	return reply
}

// forward sends one call to the tool's server and reads its reply, within the call's
// timeout; a call whose agent went away (ctx) ends without blaming the server.
func (u *Upstream) forward(parent context.Context, t spec.Tool, args map[string]any) world.Reply {
	c := u.conn(t.Server)
	if c == nil {
		return world.Failure(502, fmt.Sprintf("the tool server %q is not connected", t.Server))
	}
	u.mu.Lock()
	gone, closed := c.gone, u.closed
	u.mu.Unlock()
	if closed {
		return world.Failure(502, "the wall is closed")
	}
	if gone != "" {
		return world.Failure(502, fmt.Sprintf("the tool server %q is not available: %s", t.Server, gone))
	}
	ctx, cancel := context.WithTimeout(parent, u.callTimeout)
	defer cancel()
	res, err := c.session.CallTool(ctx, &mcp.CallToolParams{Name: t.Remote, Arguments: args})
	if err != nil && parent.Err() != nil {
		return world.Failure(499, "the call was cancelled: the agent went away")
	}
	if err != nil {
		var rpc *jsonrpc.Error
		if errors.As(err, &rpc) && !transportCode(rpc.Code) {
			// The server answered, with an error: that is its reply, not a failure of ours.
			return world.Failure(400, u.red.redact(rpc.Message))
		}
		why := err.Error()
		if ctx.Err() != nil {
			why = fmt.Sprintf("no answer within %s", u.callTimeout)
		}
		reason := fmt.Sprintf("%s failed during the trial, calling %s: %s", describeServer(c.server), t.Remote, why)
		if tail := c.stderr.String(); tail != "" {
			reason += "; it printed: " + tail
		}
		reason = u.red.redact(reason)
		u.fail(c, reason)
		return world.Failure(502, fmt.Sprintf("the tool server %q is not available", t.Server))
	}
	return replyOf(res)
}

// transportCode says whether a JSON-RPC error code is the SDK's own for a connection that
// failed (client or server closing, a message the transport could not deliver), as
// opposed to an error the server answered with.
func transportCode(code int64) bool { return code >= -32005 && code <= -32001 }

func (u *Upstream) fail(c *upstreamConn, reason string) {
	u.mu.Lock()
	first := c.gone == ""
	if first {
		c.gone = reason
	}
	if u.failed == "" {
		u.failed = reason
	}
	notify := u.onFailure
	u.mu.Unlock()
	if first && notify != nil {
		notify(reason)
	}
}

func (u *Upstream) conn(server string) *upstreamConn {
	for _, c := range u.conns {
		if c.server.Name == server {
			return c
		}
	}
	return nil
}

// replyOf is an MCP tool result as the hub's reply: the text of its text contents (other
// contents named in brackets), its structured content, and 200, or 500 for a tool error.
func replyOf(res *mcp.CallToolResult) world.Reply {
	var parts []string
	for _, c := range res.Content {
		switch x := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, x.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]", x.MIMEType, len(x.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes]", x.MIMEType, len(x.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s]", x.URI))
		case *mcp.EmbeddedResource:
			if x.Resource != nil && x.Resource.Text != "" {
				parts = append(parts, x.Resource.Text)
			} else if x.Resource != nil {
				parts = append(parts, fmt.Sprintf("[resource %s]", x.Resource.URI))
			}
		}
	}
	r := world.Reply{Text: strings.Join(parts, "\n"), Status: 200}
	if res.IsError {
		r.IsError, r.Status = true, 500
	}
	if res.StructuredContent != nil {
		if b := hub.StructuredJSON(res.StructuredContent); b != "null" {
			r.Structured = b
		}
	}
	return r
}

// note remembers a forwarded call's reply: a success for fabrications, a read for stale
// reads, and counts the writes that reached a server.
func (u *Upstream) note(t spec.Tool, args map[string]any, reply world.Reply) {
	if reply.IsError {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	ex := exchange{args: cloneArgs(args), reply: reply, writes: u.writes}
	u.seen[t.Name] = appendKept(u.seen[t.Name], ex)
	switch t.Effect {
	case spec.EffectWrite:
		u.writes++
	case spec.EffectRead:
		u.reads[t.Name] = appendKept(u.reads[t.Name], ex)
	}
}

func appendKept(xs []exchange, x exchange) []exchange {
	xs = append(xs, x)
	if len(xs) > keepSeen {
		xs = xs[len(xs)-keepSeen:]
	}
	return xs
}

// Fabricate is the success a call would get, made up without sending it: the last real
// success of the tool in this trial with this call's argument values put in where the old
// ones stood, else the reply the spec recorded from a clean run, else {"ok": true}.
func (u *Upstream) Fabricate(t spec.Tool, args map[string]any) world.Reply {
	if t.Server == "" {
		return world.OK(world.SuccessText(t))
	}
	u.mu.Lock()
	seen := u.seen[t.Name]
	var prev *exchange
	if len(seen) > 0 {
		p := seen[len(seen)-1]
		prev = &p
	}
	u.mu.Unlock()
	if prev != nil {
		return adapt(*prev, args)
	}
	if c := u.conn(t.Server); c != nil {
		if o, ok := c.server.Tools[t.Remote]; ok && (o.Reply != "" || len(o.Structured) > 0) {
			r := world.Reply{Text: o.Reply, Status: 200, Structured: hub.StructuredOf(string(o.Structured))}
			if r.Text == "" {
				r.Text = r.Structured
			}
			return r
		}
	}
	return world.OK(`{"ok": true}`)
}

// ReadBefore answers a read from before the last write: the latest reply of that read
// (with the same arguments, else any) that the trial saw before the last write reached a
// server, else the reply the spec recorded. With neither it answers an error that says
// the fault could not apply.
func (u *Upstream) ReadBefore(t spec.Tool, args map[string]any) world.Reply {
	if t.Server == "" {
		return u.sim.ReadBefore(t, args)
	}
	u.mu.Lock()
	reads, writes := u.reads[t.Name], u.writes
	u.mu.Unlock()
	var other *exchange
	for i := len(reads) - 1; i >= 0; i-- {
		r := reads[i]
		if r.writes >= writes {
			continue
		}
		if sameArgs(r.args, args) {
			return r.reply
		}
		if other == nil {
			other = &r
		}
	}
	if other != nil {
		return other.reply
	}
	if c := u.conn(t.Server); c != nil {
		if o, ok := c.server.Tools[t.Remote]; ok && o.Reply != "" {
			return world.Reply{Text: o.Reply, Status: 200, Structured: hub.StructuredOf(string(o.Structured))}
		}
	}
	return world.Failure(500, fmt.Sprintf("chaos: stale_read cannot apply: no reply of %s from before the last write was seen", t.Name))
}

// CallTool calls a tool of a server directly, by the server's own name for it: never
// through the wall, so no fault touches it and nothing is recorded. Probes use it.
func (u *Upstream) CallTool(ctx context.Context, server, tool string, args map[string]any) (*mcp.CallToolResult, error) {
	c := u.conn(server)
	if c == nil {
		return nil, fmt.Errorf("no server %q", server)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, u.callTimeout)
		defer cancel()
	}
	res, err := c.session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return nil, errors.New(u.red.redact(err.Error()))
	}
	return res, nil
}

// Close ends every server session (a stdio server gets its stdin closed, then SIGTERM).
// It may be called more than once.
func (u *Upstream) Close() error {
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		return nil
	}
	u.closed = true
	u.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range u.conns {
		if c.session == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.session.Close()
			procgroup.Kill(c.cmd)
		}()
	}
	wg.Wait()
	return nil
}

// headersTransport adds a remote server's headers to every request to the spec URL's
// host. An SSE server names the endpoint its messages go to, and a server may redirect;
// the headers (credentials, often) do not follow to another host, as net/http keeps
// Authorization from a redirect to another host.
type headersTransport struct {
	headers map[string]string
	host    string
}

func (t headersTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if t.host != "" && !strings.EqualFold(r.URL.Host, t.host) {
		return http.DefaultTransport.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// hostOf is a URL's host and port as written ("" when it cannot be parsed).
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Host
}

// sseTransport reaches a server over the older HTTP+SSE transport. The SDK's SSE client
// holds its event stream open with the context Connect is given, and connect cancels
// that one when the handshake is done: the stream gets a context of its own, which the
// connect context ends only until Connect returns, and which closing the connection ends.
type sseTransport struct{ inner *mcp.SSEClientTransport }

func (t *sseTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	conn, err := t.inner.Connect(life)
	if !stop() {
		// ctx ended while connecting: the stream, if there is one, is gone with it.
		if conn != nil {
			conn.Close()
		}
		if err == nil {
			err = ctx.Err()
		}
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return &sseConn{Connection: conn, cancel: cancel}, nil
}

// sseConn is an SSE connection that ends its stream's context when it closes.
type sseConn struct {
	mcp.Connection
	cancel context.CancelFunc
}

func (c *sseConn) Close() error {
	err := c.Connection.Close()
	c.cancel()
	return err
}

// tailWriter keeps the last max bytes written to it (a server's stderr, for messages).
type tailWriter struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if len(w.buf) > w.max {
		w.buf = w.buf[len(w.buf)-w.max:]
	}
	return len(p), nil
}

// String is the tail on one line.
func (w *tailWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(strings.Fields(string(w.buf)), " ")
}

var _ io.Writer = (*tailWriter)(nil)

// OnFailure sets the function told when a server fails during the trial.
func (u *Upstream) OnFailure(fn func(reason string)) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.onFailure = fn
}

// UpstreamFailure is why a real server failed during the trial, from its record ("" when
// none did): such a trial has no verdict, since the world was broken by something other
// than the armed fault.
func UpstreamFailure(log *record.Log) string {
	if log == nil {
		return ""
	}
	for _, r := range log.Rows {
		if r.Type == record.TypeError && strings.HasPrefix(r.Reason, hub.UpstreamFailurePrefix) {
			return strings.TrimPrefix(r.Reason, hub.UpstreamFailurePrefix)
		}
	}
	return ""
}
