// Package llm is the model API proxy ({llm_url}) and the stand-in model, which speak the
// same model APIs through one set of codecs. Both speak OpenAI Chat Completions, OpenAI
// Responses and Anthropic Messages, streamed or not; the proxy forwards each call upstream
// and damages the response where the armed model fault fires, the stand-in answers
// offline from a script.
package llm

// The model proxy: {llm_url} in a spec. An OpenAI Chat Completions, OpenAI Responses
// and Anthropic Messages compatible base URL that forwards every request to the
// upstream and, at the positions the decision picks, mutates the model's response.
//
//	agent ──> ModelProxy ──DecideModel──no──> upstream ──> streamed straight back (SSE flushed as it comes)
//	                           └──fires──> upstream ──> whole response ──> decode ──> ApplyModelFault
//	                                        ──> wait Delay ──> encode (as SSE if it was streamed) ──> agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/crashwall/chaos"
	"github.com/crashwall/chaos/cost"
	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/redact"
)

// The headers by which an agent declares where a model call stands (the public package
// github.com/crashwall/chaos sets them for Go agents). Every X-Chaos-* header is removed
// before the call is forwarded.
const (
	PositionHeader = chaos.PositionHeader
	AttemptHeader  = chaos.AttemptHeader
)

// TransportLLM is the record's transport for model calls.
const TransportLLM = "llm"

// maxModelBody bounds the requests and faulted responses the proxy reads whole.
const maxModelBody = 64 << 20

// maxSummaryBody bounds what the proxy keeps of a response it streams through, to
// summarize it in the record.
const maxSummaryBody = 4 << 20

// ModelProxyConfig is what a model proxy needs. Nil and zero fields take the
// defaults noted.
type ModelProxyConfig struct {
	// Upstream is the base URL calls are forwarded to (https://api.openai.com).
	Upstream string
	// Fault is a name from the model catalogue ("" means none).
	Fault string
	// Rate is the chance that an eligible call is faulted, from 0 to 1 (1 when zero,
	// as for faults.Condition: a run that must not fire uses the fault none).
	Rate float64
	// Steps names the positions that are eligible (every position when empty).
	Steps []string
	// Seed is the trial's seed.
	Seed int64
	// Record receives a row per model call (nil: none). Headers are never written.
	Record *record.Writer
	// Context is what the spec declares for compound_stale_data and
	// compound_wrong_entity; values the conversation used earlier are added per call.
	Context faults.ModelContext
	// Client forwards the calls (nil: http.DefaultClient). Redirects are passed
	// back to the agent, not followed.
	Client *http.Client
	// Sleep waits d or until ctx is done (nil: a real timer). Tests replace it.
	Sleep func(ctx context.Context, d time.Duration) error
	// Prices turns each call's tokens into money (nil: cost.Defaults); llm_usage.go.
	Prices cost.Table
	// MaxUSD is the trial's limits.max_cost_usd (0: none): once the calls so far cost more,
	// every further model call is refused here, so the trial overshoots by at most the
	// call that crossed it (the watcher aborts the trial too, but it learns late).
	MaxUSD float64
}

// ModelStats are the model proxy's counts so far.
type ModelStats struct {
	// Calls counts the model calls (POSTs to the three APIs) that reached the proxy.
	Calls int `json:"calls"`
	// Fired counts the calls whose response the fault mutated.
	Fired int `json:"fired"`
	// Failed counts the calls on which the fault fired but could not apply.
	Failed int `json:"failed"`
}

// ModelProxy forwards an agent's model API calls and injects the armed model fault.
// Mount it under a prefix with http.StripPrefix. It is safe for concurrent use.
type ModelProxy struct {
	upstream *url.URL
	fault    string
	rate     float64
	steps    []string
	seed     int64
	context  faults.ModelContext
	rec      *record.Writer
	client   *http.Client
	sleep    func(ctx context.Context, d time.Duration) error
	prices   cost.Table
	maxUSD   float64

	mu       sync.Mutex
	calls    int  // model calls so far: the ordinal of undeclared positions
	declared bool // a call of this trial has declared its position
	stats    ModelStats
	usage    cost.Usage // the tokens and money the responses declared (llm_usage.go)
}

// NewModelProxy checks the configuration and builds the proxy.
func NewModelProxy(cfg ModelProxyConfig) (*ModelProxy, error) {
	u, err := url.Parse(cfg.Upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("model proxy: upstream %q is not an http(s) base URL", cfg.Upstream)
	}
	fault := cfg.Fault
	if fault == "" {
		fault = faults.NoModelFault
	}
	if !faults.KnownModelFault(fault) {
		return nil, fmt.Errorf("model proxy: unknown model fault %q (known: %s)", cfg.Fault, strings.Join(faults.ModelFaultNames(), ", "))
	}
	if cfg.Rate < 0 || cfg.Rate > 1 {
		return nil, fmt.Errorf("model proxy: rate %v is not between 0 and 1", cfg.Rate)
	}
	rate := cfg.Rate
	if rate == 0 {
		rate = 1
	}
	client := http.DefaultClient
	if cfg.Client != nil {
		client = cfg.Client
	}
	c := *client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	sleep := cfg.Sleep
	if sleep == nil {
		sleep = sleepContext
	}
	prices := cfg.Prices
	if prices == nil {
		prices = cost.Defaults
	}
	return &ModelProxy{prices: prices, maxUSD: cfg.MaxUSD,
		upstream: u, fault: fault, rate: rate, steps: cfg.Steps, seed: cfg.Seed,
		context: cfg.Context, rec: cfg.Record, client: &c, sleep: sleep,
	}, nil
}

// Stats returns the counts of model calls, of faulted ones and of failed faults.
func (p *ModelProxy) Stats() ModelStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

func sleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ServeHTTP forwards the request; model calls are decided and, when the fault
// fires, answered with the mutated response.
func (p *ModelProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	api := apiFor(r.Method, r.URL.Path)
	if api == nil {
		p.pass(w, r)
		return
	}
	p.model(w, r, api)
}

// modelCall is one model call on its way through the proxy.
type modelCall struct {
	api      modelAPI
	path     string
	position string
	attempt  int
	fired    bool
	body     []byte
}

func (c *modelCall) args() json.RawMessage {
	b, _ := json.Marshal(struct {
		Position string `json:"position"`
		Attempt  int    `json:"attempt"`
	}{c.position, c.attempt})
	return b
}

func (p *ModelProxy) model(w http.ResponseWriter, r *http.Request, api modelAPI) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxModelBody+1))
	if err != nil {
		writeModelError(w, http.StatusBadRequest, "chaos model proxy: reading the request: "+err.Error())
		return
	}
	if len(body) > maxModelBody {
		writeModelError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("chaos model proxy: the request is larger than %d MB", maxModelBody>>20))
		return
	}
	attempt := 1
	if a := r.Header.Get(AttemptHeader); a != "" {
		n, err := strconv.Atoi(a)
		if err != nil || n < 0 {
			writeModelError(w, http.StatusBadRequest, fmt.Sprintf("chaos model proxy: %s %q is not a number", AttemptHeader, a))
			return
		}
		attempt = n
	}
	c := &modelCall{api: api, path: r.URL.Path, body: body, attempt: attempt, position: r.Header.Get(PositionHeader)}
	p.mu.Lock()
	if spent := p.usage.USD; p.maxUSD > 0 && spent > p.maxUSD {
		p.mu.Unlock()
		// 402: no client retries it, as it would a 429 or a 5xx.
		reason := fmt.Sprintf("the trial's model calls cost %s, more than its limit of %s (limits.max_cost_usd): no further model call is forwarded",
			cost.Format(spent), cost.Format(p.maxUSD))
		p.write(record.Row{Type: record.TypeRejected, Transport: TransportLLM, Tool: c.path, Args: c.args(), Reason: reason, Status: http.StatusPaymentRequired})
		writeModelError(w, http.StatusPaymentRequired, "chaos model proxy: "+reason)
		return
	}
	p.calls++
	p.stats.Calls++
	undeclared := c.position == ""
	if undeclared {
		c.position = fmt.Sprintf("call-%d", p.calls)
	} else {
		p.declared = true
	}
	// An agent that declares positions is faulted only at them: a call outside every
	// declared position passes untouched (AgentChaos's rule), so a helper call without a
	// position cannot take the fault meant for a step. Ordinals are the handle only for
	// agents that declare none (Claude Code, Codex), known as such while no call of the
	// trial has declared one and the spec's steps name no position but call-N.
	passes := undeclared && (p.declared || declaresPositions(p.steps))
	p.mu.Unlock()
	c.fired = !passes && p.fault != faults.NoModelFault && faults.DecideModel(p.seed, p.rate, p.steps, c.position, c.attempt)

	out, err := p.outgoing(r, bytes.NewReader(body))
	if err != nil {
		writeModelError(w, http.StatusBadGateway, "chaos model proxy: "+err.Error())
		return
	}
	out.ContentLength = int64(len(body))
	// Let the transport ask for compression and undo it, so that the proxy reads
	// the model's JSON whether or not it mutates it.
	out.Header.Del("Accept-Encoding")
	resp, err := p.client.Do(out)
	if err != nil {
		if r.Context().Err() != nil {
			return // the agent went away
		}
		reason := "model upstream unreachable: " + err.Error()
		p.write(record.Row{Type: record.TypeError, Transport: TransportLLM, Tool: c.path, Args: c.args(), Reason: reason, Status: http.StatusBadGateway})
		writeModelError(w, http.StatusBadGateway, "chaos model proxy: "+reason)
		return
	}
	defer resp.Body.Close()
	if c.fired {
		p.fire(w, r, c, resp)
		return
	}
	p.through(w, c, resp)
}

// through streams the upstream's answer to the agent as it comes and records a
// summary of it.
func (p *ModelProxy) through(w http.ResponseWriter, c *modelCall, resp *http.Response) {
	forwardHeader(w.Header(), resp.Header)
	// Without a length the agent sees the end of the answer only when this handler
	// returns, after the record's row is written.
	w.Header().Del("Content-Length")
	w.WriteHeader(resp.StatusCode)
	kept := &cappedBuffer{max: maxSummaryBody}
	err := copyFlushing(w, io.TeeReader(resp.Body, kept), isEventStream(resp.Header) || resp.ContentLength < 0)
	row := record.Row{Type: record.TypeCall, Transport: TransportLLM, Tool: c.path, Args: c.args(), Status: resp.StatusCode}
	if p.fault != faults.NoModelFault {
		row.Hit = &record.Hit{Fired: false, Performed: true}
	}
	switch {
	case err != nil:
		row.Reply = "(the response was cut off: " + err.Error() + ")"
	case kept.over:
		row.Reply = fmt.Sprintf("(a response larger than %d MB, not summarized)", maxSummaryBody>>20)
	default:
		row.Reply = summarizeResponse(c.api, resp, kept.Bytes())
		row.Usage = p.spendResponse(c.api, resp, kept.Bytes())
	}
	p.write(row)
}

// fire reads the whole response, applies the fault and answers with the result.
func (p *ModelProxy) fire(w http.ResponseWriter, r *http.Request, c *modelCall, resp *http.Response) {
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxModelBody+1))
	if err != nil {
		p.refuse(w, c, "reading the upstream response: "+err.Error())
		return
	}
	if len(data) > maxModelBody {
		p.refuse(w, c, fmt.Sprintf("the upstream response is larger than %d MB", maxModelBody>>20))
		return
	}
	if resp.StatusCode/100 != 2 {
		p.refuse(w, c, fmt.Sprintf("the upstream answered %d, not a model message: %s", resp.StatusCode, bodySnippet(data)))
		return
	}
	streamed := isEventStream(resp.Header)
	full, err := decodeBody(c.api, data, streamed)
	if err != nil {
		p.refuse(w, c, fmt.Sprintf("cannot parse the %s response: %v", c.api.Name(), err))
		return
	}
	usage := p.spend(c.api, full) // the model was paid whatever the fault does
	msg, err := c.api.decode(full)
	if err != nil {
		p.refuse(w, c, fmt.Sprintf("cannot read the %s response: %v", c.api.Name(), err))
		return
	}
	before := msg
	before.ToolCalls = append([]faults.ToolCall(nil), msg.ToolCalls...)
	mut, err := faults.ApplyModelFault(p.fault, &msg, p.contextFor(c))
	var lacks *faults.TurnLacks
	if errors.As(err, &lacks) {
		p.refuseHow(w, c, fmt.Sprintf("%s fired at %s, which needs a turn with %s; this turn had %s", lacks.Fault, c.position, lacks.Needs, lacks.Had), faults.LacksHow(lacks.Needs))
		return
	}
	if err != nil {
		p.refuse(w, c, err.Error())
		return
	}
	hit := &record.Hit{Fired: true, Family: p.fault, How: mut.What, Performed: true}
	if err := p.sleep(r.Context(), mut.Delay); err != nil {
		p.write(record.Row{Type: record.TypeCall, Transport: TransportLLM, Tool: c.path, Args: c.args(), Hit: hit,
			Reply: fmt.Sprintf("(the agent went away during the %s delay)", mut.Delay), Usage: usage})
		p.mu.Lock()
		p.stats.Fired++
		p.mu.Unlock()
		return
	}
	out := data
	if !sameMessage(before, msg) {
		if err := c.api.encode(full, msg); err != nil {
			p.refuse(w, c, fmt.Sprintf("cannot write the %s response: %v", c.api.Name(), err))
			return
		}
		if streamed {
			out = c.api.stream(full, 0)
		} else {
			out = encodeJSON(full)
		}
	}
	// The row is written before the agent has the answer, as the hub does for tools.
	p.write(record.Row{Type: record.TypeCall, Transport: TransportLLM, Tool: c.path, Args: c.args(), Hit: hit,
		Reply: summarizeMessage(msg), Status: resp.StatusCode, Usage: usage})
	p.mu.Lock()
	p.stats.Fired++
	p.mu.Unlock()
	forwardHeader(w.Header(), resp.Header)
	w.Header().Del("Content-Encoding")
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(resp.StatusCode)
	w.Write(out)
}

// refuse answers a fault that could not apply: 502 with the reason, an error row in
// the record (the trial fails with it) and a header that tells the OpenAI and
// Anthropic SDKs not to retry.
func (p *ModelProxy) refuse(w http.ResponseWriter, c *modelCall, reason string) {
	p.refuseHow(w, c, reason, "")
}

// refuseHow is refuse with the hit's How (faults.LacksHow for a turn without the part the
// fault needs).
func (p *ModelProxy) refuseHow(w http.ResponseWriter, c *modelCall, reason, how string) {
	reason = "model fault could not apply: " + reason
	p.mu.Lock()
	p.stats.Failed++
	p.mu.Unlock()
	p.write(record.Row{Type: record.TypeError, Transport: TransportLLM, Tool: c.path, Args: c.args(),
		Hit: &record.Hit{Fired: true, Family: p.fault, How: how, Performed: true}, Reason: reason, Status: http.StatusBadGateway})
	w.Header().Set("X-Should-Retry", "false")
	writeModelError(w, http.StatusBadGateway, "chaos: "+reason)
}

// declaresPositions says whether steps name a declared position (anything but call-N):
// then the agent is expected to declare them, and its undeclared calls are not faulted.
func declaresPositions(steps []string) bool {
	for _, s := range steps {
		if !ordinal.MatchString(s) {
			return true
		}
	}
	return false
}

var ordinal = regexp.MustCompile(`^call-[0-9]+$`)

// contextFor is the configured context with this call's place and the argument
// values of the conversation's earlier tool calls added after the spec's.
func (p *ModelProxy) contextFor(c *modelCall) faults.ModelContext {
	mc := faults.ModelContext{Seed: p.seed, Position: c.position, Attempt: c.attempt,
		StaleValues: map[string][]any{}, Entities: map[string][]string{}}
	for k, vs := range p.context.StaleValues {
		mc.StaleValues[k] = append([]any(nil), vs...)
	}
	for k, vs := range p.context.Entities {
		mc.Entities[k] = append([]string(nil), vs...)
	}
	req, err := parseObject(c.body)
	if err != nil {
		return mc
	}
	for _, tc := range c.api.readRequest(req).Calls {
		args, err := parseObject([]byte(tc.Arguments))
		if err != nil {
			continue
		}
		for _, k := range args.keys {
			v := args.get(k)
			if !containsJSON(mc.StaleValues[k], v) {
				mc.StaleValues[k] = append(mc.StaleValues[k], v)
			}
			if s, ok := v.(string); ok && !containsString(mc.Entities[k], s) {
				mc.Entities[k] = append(mc.Entities[k], s)
			}
		}
	}
	return mc
}

// pass forwards anything that is not a model call unchanged: other paths and
// methods, HEAD probes, query strings and headers.
func (p *ModelProxy) pass(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = r.Body
	if r.ContentLength == 0 {
		body = nil
	}
	out, err := p.outgoing(r, body)
	if err != nil {
		writeModelError(w, http.StatusBadGateway, "chaos model proxy: "+err.Error())
		return
	}
	out.ContentLength = r.ContentLength
	resp, err := p.client.Do(out)
	if err != nil {
		if r.Context().Err() == nil {
			writeModelError(w, http.StatusBadGateway, "chaos model proxy: upstream unreachable: "+err.Error())
		}
		return
	}
	defer resp.Body.Close()
	forwardHeader(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	copyFlushing(w, resp.Body, isEventStream(resp.Header) || resp.ContentLength < 0)
}

// outgoing builds the upstream request: the upstream base URL joined with the path,
// the query string as it came, the headers without hop-by-hop and X-Chaos-* ones.
func (p *ModelProxy) outgoing(r *http.Request, body io.Reader) (*http.Request, error) {
	learnModelKey(r.Header)
	u := *p.upstream
	path := r.URL.EscapedPath()
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	joined := strings.TrimSuffix(p.upstream.EscapedPath(), "/") + path
	var err error
	if u.Path, err = url.PathUnescape(joined); err != nil {
		return nil, fmt.Errorf("path %q: %v", joined, err)
	}
	u.RawPath = joined
	switch {
	case p.upstream.RawQuery == "":
		u.RawQuery = r.URL.RawQuery
	case r.URL.RawQuery != "":
		u.RawQuery = p.upstream.RawQuery + "&" + r.URL.RawQuery
	}
	out, err := http.NewRequestWithContext(r.Context(), r.Method, u.String(), body)
	if err != nil {
		return nil, err
	}
	forwardHeader(out.Header, r.Header)
	for k := range out.Header {
		if strings.HasPrefix(http.CanonicalHeaderKey(k), "X-Chaos-") {
			out.Header.Del(k)
		}
	}
	if _, ok := out.Header["User-Agent"]; !ok {
		out.Header.Set("User-Agent", "") // as httputil.ReverseProxy: none rather than Go's
	}
	return out, nil
}

// hopByHopHeaders are the hop-by-hop headers a proxy does not forward (RFC 9110, 7.6.1).
var hopByHopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func forwardHeader(dst, src http.Header) {
	for k, vs := range src {
		dst[k] = append([]string(nil), vs...)
	}
	for _, f := range src["Connection"] {
		for _, k := range strings.Split(f, ",") {
			dst.Del(strings.TrimSpace(k))
		}
	}
	for _, k := range hopByHopHeaders {
		dst.Del(k)
	}
}

// copyFlushing copies body to w, flushing after every read when flush is set, so
// that a streamed answer reaches the agent event by event.
func copyFlushing(w http.ResponseWriter, body io.Reader, flush bool) error {
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
			if flush {
				rc.Flush()
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// cappedBuffer keeps what is written to it up to max bytes.
type cappedBuffer struct {
	bytes.Buffer
	max  int
	over bool
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if c.over || c.Len()+len(p) > c.max {
		c.over = true
		return len(p), nil
	}
	return c.Buffer.Write(p)
}

// writeModelError answers with a JSON error that both the OpenAI and the Anthropic
// SDKs show with its message.
func writeModelError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(encodeJSON(obj("type", "error", "error", obj("type", "chaos_error", "message", msg))), '\n'))
}

func (p *ModelProxy) write(row record.Row) {
	if p.rec != nil {
		p.rec.Write(row)
	}
}

// decodeBody reads a whole response, assembling it first when it was streamed.
func decodeBody(api modelAPI, data []byte, streamed bool) (*jsonObject, error) {
	if streamed {
		return api.assemble(parseSSE(data))
	}
	return parseObject(data)
}

// summarizeResponse is the record's Reply for a response the proxy streamed through.
func summarizeResponse(api modelAPI, resp *http.Response, data []byte) string {
	if resp.StatusCode/100 != 2 {
		return fmt.Sprintf("HTTP %d: %s", resp.StatusCode, bodySnippet(data))
	}
	full, err := decodeBody(api, data, isEventStream(resp.Header))
	if err != nil {
		return "(not a model message: " + err.Error() + ")"
	}
	m, err := api.decode(full)
	if err != nil {
		return "(not a model message: " + err.Error() + ")"
	}
	return summarizeMessage(m)
}

// summarize says in a line what the agent got: the start of the text, the tool
// calls with their arguments, and the finish reason when it is not the usual one.
func summarizeMessage(m faults.ModelMessage) string {
	var parts []string
	if m.Text != "" {
		parts = append(parts, fmt.Sprintf("text %q", clipText(m.Text, 120)))
	}
	for _, tc := range m.ToolCalls {
		parts = append(parts, "call "+tc.Name+" "+clipText(tc.Arguments, 160))
	}
	if len(parts) == 0 {
		parts = append(parts, "an empty message")
	}
	if m.FinishReason != faults.FinishStop && m.FinishReason != faults.FinishToolCalls {
		parts = append(parts, "finish "+m.FinishReason)
	}
	return strings.Join(parts, "; ")
}

// TurnParts says which parts a turn had, from its row's Reply (summarizeMessage's line).
func TurnParts(reply string) (text, toolCalls bool) {
	return strings.HasPrefix(reply, `text "`), strings.HasPrefix(reply, "call ") || strings.Contains(reply, "; call ")
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && cut < len(s) && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

func bodySnippet(data []byte) string {
	return clipText(strings.Join(strings.Fields(string(data)), " "), 200)
}

func sameMessage(a, b faults.ModelMessage) bool {
	if a.Text != b.Text || a.FinishReason != b.FinishReason || len(a.ToolCalls) != len(b.ToolCalls) {
		return false
	}
	for i := range a.ToolCalls {
		if a.ToolCalls[i] != b.ToolCalls[i] {
			return false
		}
	}
	return true
}

func containsJSON(vs []any, v any) bool {
	e := encodeJSON(v)
	for _, x := range vs {
		if bytes.Equal(encodeJSON(x), e) {
			return true
		}
	}
	return false
}

func containsString(vs []string, s string) bool {
	for _, x := range vs {
		if x == s {
			return true
		}
	}
	return false
}

// KeyEnv are the environment variables the model SDKs and agents read their key from.
// An agent inherits the worker's environment, so chaos hands these out as surely as
// agent.env's: the worker redacts their values (activities) before any call is seen.
var KeyEnv = []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "AZURE_OPENAI_API_KEY",
	"GEMINI_API_KEY", "GOOGLE_API_KEY", "MISTRAL_API_KEY", "GROQ_API_KEY", "OPENROUTER_API_KEY", "DEEPSEEK_API_KEY", "XAI_API_KEY"}

// keyHeaders are the headers the model APIs take a key in.
var keyHeaders = []string{"Authorization", "X-Api-Key", "Api-Key", "X-Goog-Api-Key"}

// learnModelKey adds the key the agent sends its model to redact.Known, as
// MODEL_API_KEY: the proxy forwards it and nothing chaos writes may hold it, wherever
// the agent got it from (agent.env, or the worker's own environment).
func learnModelKey(h http.Header) {
	for _, k := range keyHeaders {
		v := h.Get(k)
		if v == "" {
			continue
		}
		if scheme, key, ok := strings.Cut(v, " "); ok && strings.EqualFold(scheme, "Bearer") {
			redact.Known.Add("MODEL_API_KEY", strings.TrimSpace(key))
		}
		redact.Known.Add("MODEL_API_KEY", v)
	}
}
