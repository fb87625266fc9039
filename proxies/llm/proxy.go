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
	"log"
	"net/http"
	"net/http/httputil"
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
	// Prices turns each call's tokens into money (nil: cost.Defaults); usage.go.
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
	rp       *httputil.ReverseProxy
	sleep    func(ctx context.Context, d time.Duration) error
	prices   cost.Table
	maxUSD   float64

	mu       sync.Mutex
	calls    int  // model calls so far: the ordinal of undeclared positions
	declared bool // a call of this trial has declared its position
	stats    ModelStats
	usage    cost.Usage // the tokens and money the responses declared (usage.go)
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
	transport := http.DefaultTransport
	if cfg.Client != nil && cfg.Client.Transport != nil {
		transport = cfg.Client.Transport
	}
	sleep := cfg.Sleep
	if sleep == nil {
		sleep = sleepContext
	}
	prices := cfg.Prices
	if prices == nil {
		prices = cost.Defaults
	}
	p := &ModelProxy{prices: prices, maxUSD: cfg.MaxUSD,
		upstream: u, fault: fault, rate: rate, steps: cfg.Steps, seed: cfg.Seed,
		context: cfg.Context, rec: cfg.Record, sleep: sleep,
	}
	// The forwarding is httputil.ReverseProxy's: the upstream's URL joined with the
	// path and query (SetURL), hop-by-hop headers dropped, redirects passed back, a
	// streamed answer (an event stream, or one of no length) flushed as it comes. The
	// proxy's part is the model call's: its row, its money and its fault (respond).
	p.rp = &httputil.ReverseProxy{
		Rewrite:        p.rewrite,
		Transport:      transport,
		ModifyResponse: p.respond,
		ErrorHandler:   p.failed,
		ErrorLog:       log.New(io.Discard, "", 0), // what fails is answered and recorded
	}
	return p, nil
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
		p.rp.ServeHTTP(w, r) // anything else passes as it came
		return
	}
	p.model(w, r, api)
}

// callKey carries a model call's *modelCall in its request's context, from model to
// respond and failed.
type callKey struct{}

// callOf is the model call r carries, nil for a request that is not one.
func callOf(r *http.Request) *modelCall {
	c, _ := r.Context().Value(callKey{}).(*modelCall)
	return c
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

	r = r.WithContext(context.WithValue(r.Context(), callKey{}, c))
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	p.rp.ServeHTTP(w, r)
}

// rewrite makes the upstream request: the upstream's base URL joined with the path and
// the query as they came, the headers without X-Chaos-* ones. A model call asks for no
// encoding, so the transport asks for compression and undoes it, and the proxy reads the
// model's JSON whether or not it mutates it.
func (p *ModelProxy) rewrite(pr *httputil.ProxyRequest) {
	learnModelKey(pr.In.Header)
	pr.SetURL(p.upstream)
	for k := range pr.Out.Header {
		if strings.HasPrefix(http.CanonicalHeaderKey(k), "X-Chaos-") {
			pr.Out.Header.Del(k)
		}
	}
	if callOf(pr.In) != nil {
		pr.Out.Header.Del("Accept-Encoding")
	}
}

// respond takes the upstream's answer to a model call: the armed fault's, where it
// fired (fire), else the answer as it comes, recorded once it has passed (through).
func (p *ModelProxy) respond(resp *http.Response) error {
	c := callOf(resp.Request)
	switch {
	case c == nil:
		return nil
	case c.fired:
		return p.fire(resp, c)
	}
	p.through(resp, c)
	return nil
}

// failed answers what could not be forwarded: a fault that could not apply (refusal),
// an upstream that could not be reached, or nothing to an agent that went away.
func (p *ModelProxy) failed(w http.ResponseWriter, r *http.Request, err error) {
	c := callOf(r)
	var ref *refusal
	switch {
	case errors.As(err, &ref):
		p.refuseHow(w, c, ref.reason, ref.how)
	case r.Context().Err() != nil:
		// the agent went away
	case c == nil:
		writeModelError(w, http.StatusBadGateway, "chaos model proxy: upstream unreachable: "+err.Error())
	default:
		reason := "model upstream unreachable: " + err.Error()
		p.write(record.Row{Type: record.TypeError, Transport: TransportLLM, Tool: c.path, Args: c.args(), Reason: reason, Status: http.StatusBadGateway})
		writeModelError(w, http.StatusBadGateway, "chaos model proxy: "+reason)
	}
}

// refusal is a fault that fired and could not apply: the agent gets a 502 with reason.
type refusal struct{ reason, how string }

func (r *refusal) Error() string { return r.reason }

// errAgentGone ends a faulted call whose agent went away during the fault's delay.
var errAgentGone = errors.New("the agent went away")

// through passes the upstream's answer to the agent as it comes (with no Content-Length,
// so that the agent sees its end only once the row is written) and records a summary of it
// when the body is closed, at its end or when the agent went away.
func (p *ModelProxy) through(resp *http.Response, c *modelCall) {
	resp.Header.Del("Content-Length") // resp.ContentLength stays: a JSON answer is not flushed write by write
	body := &recordedBody{ReadCloser: resp.Body, kept: cappedBuffer{max: maxSummaryBody}}
	body.done = func(b *recordedBody) {
		row := record.Row{Type: record.TypeCall, Transport: TransportLLM, Tool: c.path, Args: c.args(), Status: resp.StatusCode}
		if p.fault != faults.NoModelFault {
			row.Hit = &record.Hit{Fired: false, Performed: true}
		}
		switch {
		case b.err != nil:
			row.Reply = "(the response was cut off: " + b.err.Error() + ")"
		case !b.eof:
			row.Reply = "(the response was cut off: the agent stopped reading)"
		case b.kept.over:
			row.Reply = fmt.Sprintf("(a response larger than %d MB, not summarized)", maxSummaryBody>>20)
		default:
			row.Reply = summarizeResponse(c.api, resp, b.kept.Bytes())
			row.Usage = p.spendResponse(c.api, resp, b.kept.Bytes())
		}
		p.write(row)
	}
	resp.Body = body
}

// recordedBody is an answer on its way to the agent: what it read is kept (up to a
// cap), and done is called once, when it is closed.
type recordedBody struct {
	io.ReadCloser
	kept cappedBuffer
	eof  bool
	err  error
	done func(*recordedBody)
	once sync.Once
}

func (b *recordedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.kept.Write(p[:n])
	switch {
	case err == io.EOF:
		b.eof = true
	case err != nil:
		b.err = err
	}
	return n, err
}

func (b *recordedBody) Close() error {
	b.once.Do(func() { b.done(b) })
	return b.ReadCloser.Close()
}

// fire reads the whole response, applies the fault and makes the result the answer; a
// fault that cannot apply is a refusal (failed answers it).
func (p *ModelProxy) fire(resp *http.Response, c *modelCall) error {
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxModelBody+1))
	resp.Body.Close()
	if err != nil {
		return &refusal{reason: "reading the upstream response: " + err.Error()}
	}
	if len(data) > maxModelBody {
		return &refusal{reason: fmt.Sprintf("the upstream response is larger than %d MB", maxModelBody>>20)}
	}
	if resp.StatusCode/100 != 2 {
		return &refusal{reason: fmt.Sprintf("the upstream answered %d, not a model message: %s", resp.StatusCode, bodySnippet(data))}
	}
	streamed := isEventStream(resp.Header)
	full, err := decodeBody(c.api, data, streamed)
	if err != nil {
		return &refusal{reason: fmt.Sprintf("cannot parse the %s response: %v", c.api.Name(), err)}
	}
	usage := p.spend(c.api, full) // the model was paid whatever the fault does
	msg, err := c.api.decode(full)
	if err != nil {
		return &refusal{reason: fmt.Sprintf("cannot read the %s response: %v", c.api.Name(), err)}
	}
	before := msg
	before.ToolCalls = append([]faults.ToolCall(nil), msg.ToolCalls...)
	mut, err := faults.ApplyModelFault(p.fault, &msg, p.contextFor(c))
	var lacks *faults.TurnLacks
	if errors.As(err, &lacks) {
		return &refusal{reason: fmt.Sprintf("%s fired at %s, which needs a turn with %s; this turn had %s", lacks.Fault, c.position, lacks.Needs, lacks.Had), how: faults.LacksHow(lacks.Needs)}
	}
	if err != nil {
		return &refusal{reason: err.Error()}
	}
	hit := &record.Hit{Fired: true, Family: p.fault, How: mut.What, Performed: true}
	if err := p.sleep(resp.Request.Context(), mut.Delay); err != nil {
		p.write(record.Row{Type: record.TypeCall, Transport: TransportLLM, Tool: c.path, Args: c.args(), Hit: hit,
			Reply: fmt.Sprintf("(the agent went away during the %s delay)", mut.Delay), Usage: usage})
		p.mu.Lock()
		p.stats.Fired++
		p.mu.Unlock()
		return errAgentGone
	}
	out := data
	if !sameMessage(before, msg) {
		if err := c.api.encode(full, msg); err != nil {
			return &refusal{reason: fmt.Sprintf("cannot write the %s response: %v", c.api.Name(), err)}
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
	resp.Header.Del("Content-Encoding")
	resp.Header.Set("Content-Length", strconv.Itoa(len(out)))
	resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(out)), int64(len(out))
	return nil
}

// refuseHow answers a fault that could not apply: 502 with the reason, an error row in
// the record (the trial fails with it; how is the hit's How, faults.LacksHow for a turn
// without the part the fault needs) and a header that tells the OpenAI and Anthropic
// SDKs not to retry.
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
