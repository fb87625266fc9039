package llm

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/tests/fixture"
)

// llmUpdate is the -update flag, defined here unless another test file of the
// package already did.
var llmUpdate = func() func() bool {
	if f := flag.Lookup("update"); f != nil {
		return func() bool { return f.Value.String() == "true" }
	}
	b := flag.Bool("update", false, "rewrite the golden files")
	return func() bool { return *b }
}()

// llmAPIs are the three APIs with the path a client posts to.
var llmAPIs = []struct {
	path string
	api  modelAPI
}{
	{"/v1/chat/completions", chatAPI{}},
	{"/v1/responses", responsesAPI{}},
	{"/v1/messages", messagesAPI{}},
}

const llmTask = "Read the customer's email about ticket T-4821 and set the ticket's priority and team the way the email asks."

// llmGoldenText is the script's closing text in the golden tests: not plain ASCII,
// so that llm_corrupt_single has something to garble.
const llmGoldenText = "Done. Priority urgent, team payments — Zoë has been told."

// llmScript is the support-ticket script, its closing text replaced by text.
func llmScript(tb testing.TB, text string) Script {
	tb.Helper()
	s, err := LoadScript(filepath.Join("testdata", "support-ticket.script.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	if text != "" {
		s[len(s)-1].Text = text
	}
	return s
}

// llmStandin serves the stand-in model on a test server.
func llmStandin(tb testing.TB, s Script) string {
	tb.Helper()
	srv := httptest.NewServer(NewStandin(s))
	tb.Cleanup(srv.Close)
	return srv.URL
}

// llmProxy serves a model proxy under /llm, as the hub mounts it.
func llmProxy(tb testing.TB, cfg ModelProxyConfig) (string, *ModelProxy) {
	tb.Helper()
	p, err := NewModelProxy(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/llm/", http.StripPrefix("/llm", p))
	srv := httptest.NewServer(mux)
	tb.Cleanup(srv.Close)
	return srv.URL + "/llm", p
}

// llmTurns are the steps of the support-ticket conversation: the call the model made and
// what the tool answered.
var llmTurns = []struct{ tool, args, result string }{
	{"read_email", `{}`, `{"ticket": "T-4821", "from": "dana@example.com", "body": "This is urgent, please route to the payments team."}`},
	{"update_ticket", `{"field":"priority","value":"urgent"}`, `{"status": "updated"}`},
	{"update_ticket", `{"field":"team","value":"payments"}`, `{"status": "updated"}`},
	{"get_ticket_field", `{"field":"priority"}`, `{"value": "urgent"}`}, // after the script ended
}

// llmRequest is the request of api's client after the agent answered `results` tool
// calls of the support-ticket conversation.
func llmRequest(api modelAPI, results int, stream bool) []byte {
	var req *jsonObject
	switch api.(type) {
	case chatAPI:
		msgs := []any{obj("role", "system", "content", "You resolve support tickets."), obj("role", "user", "content", llmTask)}
		for k := range results {
			t := llmTurns[k]
			msgs = append(msgs,
				obj("role", "assistant", "content", nil, "tool_calls", []any{obj("id", api.callID(k), "type", "function", "function", obj("name", t.tool, "arguments", t.args))}),
				obj("role", "tool", "tool_call_id", api.callID(k), "content", t.result))
		}
		req = obj("model", "gpt-test", "messages", msgs)
		if stream {
			req.set("stream", true)
			req.set("stream_options", obj("include_usage", true))
		}
	case responsesAPI:
		input := []any{obj("role", "user", "content", llmTask)}
		for k := range results {
			t := llmTurns[k]
			input = append(input,
				obj("type", "function_call", "call_id", api.callID(k), "name", t.tool, "arguments", t.args),
				obj("type", "function_call_output", "call_id", api.callID(k), "output", t.result))
		}
		req = obj("model", "gpt-test", "instructions", "You resolve support tickets.", "input", input)
		if stream {
			req.set("stream", true)
		}
	case messagesAPI:
		msgs := []any{obj("role", "user", "content", llmTask)}
		for k := range results {
			t := llmTurns[k]
			input, _ := parseJSON([]byte(t.args))
			msgs = append(msgs,
				obj("role", "assistant", "content", []any{obj("type", "tool_use", "id", api.callID(k), "name", t.tool, "input", input)}),
				obj("role", "user", "content", []any{obj("type", "tool_result", "tool_use_id", api.callID(k), "content", t.result)}))
		}
		req = obj("model", "claude-test", "max_tokens", 1024, "system", "You resolve support tickets.", "messages", msgs)
		if stream {
			req.set("stream", true)
		}
	}
	return encodeJSON(req)
}

func llmPost(tb testing.TB, url string, body []byte, header map[string]string) (*http.Response, []byte) {
	tb.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp, data
}

// llmMessage decodes what a client received.
func llmMessage(tb testing.TB, api modelAPI, resp *http.Response, data []byte) faults.ModelMessage {
	tb.Helper()
	full, err := decodeBody(api, data, isEventStream(resp.Header))
	if err != nil {
		tb.Fatalf("the client got a body the codec cannot read: %v\n%s", err, data)
	}
	m, err := api.decode(full)
	if err != nil {
		tb.Fatalf("the client got a body the codec cannot read: %v\n%s", err, data)
	}
	return m
}

// llmToolFault says whether a fault targets tool calls (its golden is on a
// tool-calling turn) rather than the text (a text turn).
func llmToolFault(name string) bool {
	return strings.HasPrefix(name, "tool_") || name == "compound_stale_data" || name == "compound_wrong_entity" || name == "compound_content_filter"
}

// llmGoldenContext is what the golden spec declares for the compound faults.
var llmGoldenContext = faults.ModelContext{
	StaleValues: map[string][]any{"value": {"normal"}},
	Entities:    map[string][]string{"field": {"priority", "team"}},
}

// TestLLMGoldens: every fault, on each of the three APIs, streamed and not, the exact
// response the client receives through the proxy in front of the stand-in model,
// compared with testdata/golden/<api>-<mode>-<fault>.txt (rewrite with -update).
func TestLLMGoldens(t *testing.T) {
	upstream := llmStandin(t, llmScript(t, llmGoldenText))
	type golden struct {
		fault   string
		file    string
		results int // the turn: 1 answers a tool call, 3 the closing text
	}
	var cases []golden
	for _, f := range faults.ModelFaultNames() {
		results := 3
		if llmToolFault(f) {
			results = 1
		}
		cases = append(cases, golden{f, f, results})
	}
	// A fault that cannot apply on its turn: the refusal the client receives.
	cases = append(cases, golden{"tool_error_single", "refusal-tool_error_single-on-text", 3})

	for _, a := range llmAPIs {
		for _, mode := range []string{"json", "sse"} {
			for _, g := range cases {
				name := fmt.Sprintf("%s-%s-%s", a.api.Name(), mode, g.file)
				t.Run(name, func(t *testing.T) {
					var mu sync.Mutex
					var slept []time.Duration
					url, p := llmProxy(t, ModelProxyConfig{
						Upstream: upstream, Fault: g.fault, Seed: 7, Context: llmGoldenContext,
						Sleep: func(ctx context.Context, d time.Duration) error {
							mu.Lock()
							slept = append(slept, d)
							mu.Unlock()
							return nil
						},
					})
					body := llmRequest(a.api, g.results, mode == "sse")
					resp, got := llmPost(t, url+a.path, body, map[string]string{PositionHeader: "golden", "Authorization": "Bearer sk-test"})

					var b strings.Builder
					fmt.Fprintf(&b, "status: %d\ncontent-type: %s\n", resp.StatusCode, resp.Header.Get("Content-Type"))
					for _, d := range slept {
						if d > 0 {
							fmt.Fprintf(&b, "delay: %s\n", d)
						}
					}
					b.WriteString("\n")
					b.Write(got)
					llmCheckGolden(t, filepath.Join("testdata", "golden", name+".txt"), b.String())

					// What the client got is what the fault makes of the stand-in's answer.
					direct, directBody := llmPost(t, upstream+a.path, body, nil)
					want := llmMessage(t, a.api, direct, directBody)
					mut, err := faults.ApplyModelFault(g.fault, &want, faults.ModelContext{Seed: 7, Position: "golden", Attempt: 1,
						StaleValues: llmGoldenContext.StaleValues, Entities: llmGoldenContext.Entities})
					st := p.Stats()
					if err != nil {
						if resp.StatusCode != http.StatusBadGateway || !bytes.Contains(got, []byte("model fault could not apply")) {
							t.Fatalf("the fault cannot apply (%v) but the client got %d: %s", err, resp.StatusCode, got)
						}
						if resp.Header.Get("X-Should-Retry") != "false" {
							t.Error("a refusal without X-Should-Retry: false")
						}
						if st != (ModelStats{Calls: 1, Failed: 1}) {
							t.Errorf("stats %+v", st)
						}
						return
					}
					if resp.StatusCode != http.StatusOK {
						t.Fatalf("status %d: %s", resp.StatusCode, got)
					}
					if _, ok := a.api.(messagesAPI); ok { // input is an object: its JSON comes back compact
						for i, tc := range want.ToolCalls {
							v, _ := parseJSON([]byte(tc.Arguments))
							want.ToolCalls[i].Arguments = string(encodeJSON(v))
						}
					}
					if gotMsg := llmMessage(t, a.api, resp, got); !reflect.DeepEqual(gotMsg, want) {
						t.Errorf("the client got\n %#v\nwant\n %#v", gotMsg, want)
					}
					if isEventStream(resp.Header) != (mode == "sse") {
						t.Errorf("content type %q in mode %s", resp.Header.Get("Content-Type"), mode)
					}
					wantSlept := []time.Duration{mut.Delay}
					if g.fault == faults.NoModelFault {
						wantSlept = nil
					}
					if !reflect.DeepEqual(slept, wantSlept) {
						t.Errorf("slept %v, want %v", slept, wantSlept)
					}
					wantStats := ModelStats{Calls: 1, Fired: 1}
					if g.fault == faults.NoModelFault {
						wantStats.Fired = 0
					}
					if st != wantStats {
						t.Errorf("stats %+v, want %+v", st, wantStats)
					}
				})
			}
		}
	}
}

func llmCheckGolden(tb testing.TB, path, got string) {
	tb.Helper()
	if llmUpdate() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run the test with -update to write it)", err)
	}
	if got != string(want) {
		tb.Errorf("%s differs (run with -update to rewrite it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// TestLLMPassThrough: when the fault does not fire, the client receives the
// upstream's bytes exactly.
func TestLLMPassThrough(t *testing.T) {
	upstream := llmStandin(t, llmScript(t, ""))
	for _, cfg := range []struct {
		name  string
		fault string
		steps []string
	}{{"fault none", "none", nil}, {"position not in steps", "llm_error_single", []string{"summarize"}}} {
		url, p := llmProxy(t, ModelProxyConfig{Upstream: upstream, Fault: cfg.fault, Steps: cfg.steps})
		calls := 0
		for _, a := range llmAPIs {
			for _, stream := range []bool{false, true} {
				for results := range len(llmTurns) + 1 {
					body := llmRequest(a.api, results, stream)
					direct, want := llmPost(t, upstream+a.path, body, nil)
					resp, got := llmPost(t, url+a.path, body, nil)
					calls++
					if !bytes.Equal(got, want) || resp.StatusCode != direct.StatusCode || resp.Header.Get("Content-Type") != direct.Header.Get("Content-Type") {
						t.Errorf("%s %s stream=%v turn %d: through the proxy\n%s\ndirect\n%s", cfg.name, a.api.Name(), stream, results, got, want)
					}
				}
			}
		}
		if st := p.Stats(); st != (ModelStats{Calls: calls}) {
			t.Errorf("%s: stats %+v, want %d calls and nothing fired", cfg.name, st, calls)
		}
	}
}

// TestLLMStreamsUnbuffered: with no fault at that position, the first event reaches
// the client before the upstream writes the last.
func TestLLMStreamsUnbuffered(t *testing.T) {
	release := make(chan struct{})
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hel\"}}]}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(upstream.Close)
	defer close(release)
	// The fault is armed, but only at another step.
	url, _ := llmProxy(t, ModelProxyConfig{Upstream: upstream.URL, Fault: "llm_error_single", Steps: []string{"summarize"}})

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/chat/completions", strings.NewReader(`{"model":"m","stream":true,"messages":[]}`))
	req.Header.Set(PositionHeader, "choose_tool")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil {
		t.Fatalf("the first event did not arrive while the upstream held the rest: %v", err)
	}
	if !strings.Contains(line, `"content":"Hel"`) {
		t.Errorf("first line %q", line)
	}
}

// TestLLMPassesOtherRequests: other paths and methods, HEAD probes, query strings and
// headers (API keys included) pass through; X-Chaos-* headers do not.
func TestLLMPassesOtherRequests(t *testing.T) {
	type seen struct {
		method, path, query, body string
		header                    http.Header
	}
	got := make(chan seen, 1)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.URL.Path, r.URL.RawQuery, string(b), r.Header.Clone()}
		w.Header().Set("X-Upstream", "yes")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTeapot)
		if r.Method != http.MethodHead {
			io.WriteString(w, `{"data":[{"id":"gpt-test"}]}`)
		}
	}))
	t.Cleanup(upstream.Close)
	url, p := llmProxy(t, ModelProxyConfig{Upstream: upstream.URL + "/base", Fault: "llm_error_single"})

	cases := []struct{ method, path, body string }{
		{http.MethodGet, "/v1/models?limit=2&after=x%2Fy", ""},
		{http.MethodHead, "/v1/models", ""},
		{http.MethodPost, "/v1/embeddings", `{"input":"hi"}`},
		{http.MethodPost, "/v1/messages/count_tokens", `{"messages":[]}`},
		{http.MethodGet, "/v1/responses/resp_123?include=usage", ""},
		{http.MethodDelete, "/v1/responses/resp_123", ""},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(c.method, url+c.path, strings.NewReader(c.body))
		if c.body == "" {
			req.Body = nil
		}
		req.Header.Set("Authorization", "Bearer sk-secret")
		req.Header.Set("X-Api-Key", "sk-ant-secret")
		req.Header.Set("Anthropic-Version", "2023-06-01")
		req.Header.Set(PositionHeader, "plan")
		req.Header.Set("X-Chaos-Trial", "t1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		s := <-got
		path, query, _ := strings.Cut(c.path, "?")
		if s.method != c.method || s.path != "/base"+path || s.query != query || s.body != c.body {
			t.Errorf("%s %s reached the upstream as %s %s?%s %q", c.method, c.path, s.method, s.path, s.query, s.body)
		}
		if s.header.Get("Authorization") != "Bearer sk-secret" || s.header.Get("X-Api-Key") != "sk-ant-secret" || s.header.Get("Anthropic-Version") != "2023-06-01" {
			t.Errorf("%s %s: headers not forwarded: %v", c.method, c.path, s.header)
		}
		for k := range s.header {
			if strings.HasPrefix(k, "X-Chaos-") {
				t.Errorf("%s %s: %s was forwarded", c.method, c.path, k)
			}
		}
		if resp.StatusCode != http.StatusTeapot || resp.Header.Get("X-Upstream") != "yes" {
			t.Errorf("%s %s: answered %d %v", c.method, c.path, resp.StatusCode, resp.Header)
		}
		if want := `{"data":[{"id":"gpt-test"}]}`; c.method != http.MethodHead && string(body) != want {
			t.Errorf("%s %s: body %q", c.method, c.path, body)
		}
	}
	if st := p.Stats(); st != (ModelStats{}) {
		t.Errorf("requests that are not model calls were counted: %+v", st)
	}
}

func llmRecord(tb testing.TB) (*record.Writer, string) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "record.jsonl")
	w, err := record.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { w.Close(record.Row{}) })
	return w, path
}

// TestLLMRecord: one row per model call with the path, the position, the decision
// and a summary of what the agent got; refusals as error rows; never a header.
func TestLLMRecord(t *testing.T) {
	upstream := llmStandin(t, llmScript(t, ""))
	rec, path := llmRecord(t)
	url, p := llmProxy(t, ModelProxyConfig{Upstream: upstream, Fault: "tool_error_single", Steps: []string{"choose_tool", "summarize"}, Seed: 3, Record: rec})
	secret := map[string]string{"Authorization": "Bearer sk-very-secret", "X-Api-Key": "sk-ant-very-secret"}
	post := func(api modelAPI, apiPath string, results int, stream bool, position string) {
		h := map[string]string{}
		for k, v := range secret {
			h[k] = v
		}
		if position != "" {
			h[PositionHeader] = position
			h[AttemptHeader] = "2"
		}
		llmPost(t, url+apiPath, llmRequest(api, results, stream), h)
	}
	post(chatAPI{}, "/v1/chat/completions", 0, false, "")        // call-1, not eligible
	post(messagesAPI{}, "/v1/messages", 1, true, "choose_tool")  // fires
	post(responsesAPI{}, "/v1/responses", 3, false, "summarize") // fires on a text turn: refused
	post(chatAPI{}, "/v1/chat/completions", 2, true, "")         // call-4, not eligible
	rec.Close(record.Row{})

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("secret")) {
		t.Fatalf("the record holds a header:\n%s", data)
	}
	log, err := record.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, r := range log.Rows {
		if r.Type == record.TypeSessionEnd {
			continue
		}
		hit := "-"
		if r.Hit != nil {
			hit = fmt.Sprintf("fired=%v family=%s how=%q", r.Hit.Fired, r.Hit.Family, r.Hit.How)
		}
		rows = append(rows, fmt.Sprintf("%s %s %s %s %s | %s | %s | %d", r.Type, r.Transport, r.Tool, r.Args, hit, r.Reply, r.Reason, r.Status))
	}
	want := []string{
		`call llm /v1/chat/completions {"position":"call-1","attempt":1} fired=false family= how="" | call read_email {} |  | 200`,
		`call llm /v1/messages {"position":"choose_tool","attempt":2} fired=true family=tool_error_single how="replaced the arguments of update_ticket with {}" | call update_ticket {} |  | 200`,
		`error llm /v1/responses {"position":"summarize","attempt":2} fired=true family=tool_error_single how="the turn lacks tool calls" |  | model fault could not apply: tool_error_single fired at summarize, which needs a turn with tool calls; this turn had only text, no tool call | 502`,
		`call llm /v1/chat/completions {"position":"call-4","attempt":1} fired=false family= how="" | call update_ticket {"field":"team","value":"payments"} |  | 200`,
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	if st := p.Stats(); st != (ModelStats{Calls: 4, Fired: 1, Failed: 1}) {
		t.Errorf("stats %+v", st)
	}
}

// TestLLMRefusals: a response the proxy cannot read at a position where the fault
// fires fails the call with the reason; it is never passed on as if faulted.
func TestLLMRefusals(t *testing.T) {
	tests := []struct {
		name, path, ctype, body string
		status                  int
		reason                  string
	}{
		{"not JSON", "/v1/chat/completions", "application/json", "<html>oops</html>", 200, "cannot parse the openai-chat response: invalid JSON"},
		{"no choices", "/v1/chat/completions", "application/json", `{"id":"x","choices":[]}`, 200, "the response has no choices"},
		{"upstream error", "/v1/messages", "application/json", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, 529, "the upstream answered 529"},
		{"stream without end", "/v1/responses", "text/event-stream", "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{}}\n\n", 200, "the stream ended without response.completed"},
		{"stream error", "/v1/messages", "text/event-stream", "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n", 200, "the stream carried an error: Overloaded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.ctype)
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			}))
			t.Cleanup(upstream.Close)
			rec, path := llmRecord(t)
			url, p := llmProxy(t, ModelProxyConfig{Upstream: upstream.URL, Fault: "llm_error_single", Record: rec})
			resp, body := llmPost(t, url+tt.path, []byte(`{"model":"m"}`), nil)
			if resp.StatusCode != http.StatusBadGateway || !bytes.Contains(body, []byte(tt.reason)) {
				t.Errorf("got %d %s, want 502 naming %q", resp.StatusCode, body, tt.reason)
			}
			rec.Close(record.Row{})
			log, err := record.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			r := log.Rows[0]
			if r.Type != record.TypeError || !strings.HasPrefix(r.Reason, "model fault could not apply: ") || !strings.Contains(r.Reason, tt.reason) {
				t.Errorf("row %+v", r)
			}
			if st := p.Stats(); st != (ModelStats{Calls: 1, Failed: 1}) {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// TestLLMDelayRespectsContext: the real timer gives up when the agent does.
func TestLLMDelayRespectsContext(t *testing.T) {
	upstream := llmStandin(t, llmScript(t, ""))
	rec, path := llmRecord(t)
	url, p := llmProxy(t, ModelProxyConfig{Upstream: upstream, Fault: "compound_slow_response", Record: rec})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/messages", bytes.NewReader(llmRequest(messagesAPI{}, 0, false)))
	_, err := http.DefaultClient.Do(req)
	if err == nil {
		t.Fatal("the call returned before the 5 s delay")
	}
	// The proxy writes its row, then counts the call, once the timer gave up.
	fixture.Eventually(t, "the proxy to count the fired call", func() bool { return p.Stats().Fired > 0 })
	rec.Close(record.Row{})
	log, err := record.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// This reply is written only when the timer gave up before its 5 s (the agent's
	// context ended): one that ran out would have the proxy write the model's answer.
	if r := log.Rows[0]; r.Hit == nil || !r.Hit.Fired || r.Reply != "(the agent went away during the 5s delay)" {
		t.Errorf("row %+v", r)
	}
}

// TestLLMDecisionDeterminism: the same seed and position decide the same across runs,
// and calls added at other positions (declared or not) do not move a decision.
func TestLLMDecisionDeterminism(t *testing.T) {
	upstream := llmStandin(t, llmScript(t, ""))
	named := []string{"plan", "choose_tool", "write_priority", "write_team", "summarize", "verify", "retry", "close"}
	run := func(seed int64, extra int) map[string]bool {
		url, _ := llmProxy(t, ModelProxyConfig{Upstream: upstream, Fault: "llm_error_single", Rate: 0.5, Seed: seed})
		out := map[string]bool{}
		for i, pos := range named {
			for j := range extra * (i%3 + 1) { // other calls first: undeclared, and at other names
				h := map[string]string{}
				if j%2 == 1 {
					h[PositionHeader] = fmt.Sprintf("other-%d-%d", i, j)
				}
				llmPost(t, url+"/v1/chat/completions", llmRequest(chatAPI{}, 3, false), h)
			}
			_, body := llmPost(t, url+"/v1/chat/completions", llmRequest(chatAPI{}, 3, false), map[string]string{PositionHeader: pos})
			out[pos] = bytes.Contains(body, []byte("[API ERROR]"))
		}
		return out
	}
	for _, seed := range []int64{1, 2, 3} {
		first := run(seed, 0)
		if again := run(seed, 0); !reflect.DeepEqual(again, first) {
			t.Errorf("seed %d: two runs decided differently:\n%v\n%v", seed, first, again)
		}
		if more := run(seed, 2); !reflect.DeepEqual(more, first) {
			t.Errorf("seed %d: added calls moved a decision:\n%v\n%v", seed, first, more)
		}
		for _, pos := range named {
			if first[pos] != faults.DecideModel(seed, 0.5, nil, pos, 1) {
				t.Errorf("seed %d %s: the proxy and DecideModel disagree", seed, pos)
			}
		}
	}
}

// TestLLMHarvestsConversation: the values of the conversation's earlier tool calls
// are the stale values and other entities of compound faults.
func TestLLMHarvestsConversation(t *testing.T) {
	upstream := llmStandin(t, llmScript(t, ""))
	for _, a := range llmAPIs {
		for _, tt := range []struct{ fault, want string }{
			{"compound_stale_data", `{"field":"priority","value":"urgent"}`},
			{"compound_wrong_entity", `{"field":"priority","value":"payments"}`},
		} {
			url, _ := llmProxy(t, ModelProxyConfig{Upstream: upstream, Fault: tt.fault})
			// After the priority was set: the model now sets the team.
			resp, body := llmPost(t, url+a.path, llmRequest(a.api, 2, false), nil)
			m := llmMessage(t, a.api, resp, body)
			if len(m.ToolCalls) != 1 || m.ToolCalls[0].Arguments != tt.want {
				t.Errorf("%s %s: got %+v, want arguments %s", a.api.Name(), tt.fault, m.ToolCalls, tt.want)
			}
		}
	}
}

func TestModelProxyConfig(t *testing.T) {
	for _, tt := range []struct {
		cfg  ModelProxyConfig
		want string
	}{
		{ModelProxyConfig{Upstream: "http://x", Fault: "llm_eror_single"}, `unknown model fault "llm_eror_single" (known: llm_error_single, llm_timeout_single, `},
		{ModelProxyConfig{Upstream: "localhost:8080"}, "is not an http(s) base URL"},
		{ModelProxyConfig{Upstream: "http://x", Rate: 1.5}, "rate 1.5 is not between 0 and 1"},
	} {
		if _, err := NewModelProxy(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: got %v, want %q", tt.cfg, err, tt.want)
		}
	}
	if _, err := NewModelProxy(ModelProxyConfig{Upstream: "https://api.openai.com"}); err != nil {
		t.Errorf("fault defaults to none: %v", err)
	}
}

// --- codecs -----------------------------------------------------------------------

// Responses as the real APIs send them, with fields the codecs do not know.
var codecSamples = []struct {
	api  modelAPI
	body string
	want faults.ModelMessage
}{
	{chatAPI{}, `{"id":"chatcmpl-AbC","object":"chat.completion","created":1741570283,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_abc","type":"function","function":{"name":"update_ticket","arguments":"{\"field\":\"priority\",\"value\":\"urgent\"}"}}],"refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":82,"completion_tokens":17,"total_tokens":99,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0}},"service_tier":"default","system_fingerprint":"fp_6ec83003ad"}`,
		faults.ModelMessage{ToolCalls: []faults.ToolCall{{ID: "call_abc", Name: "update_ticket", Arguments: `{"field":"priority","value":"urgent"}`}}, FinishReason: "tool_calls"}},
	{chatAPI{}, `{"id":"chatcmpl-2","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hello <b>there</b> & welcome"},"finish_reason":"length"}]}`,
		faults.ModelMessage{Text: "Hello <b>there</b> & welcome", FinishReason: "length"}},
	{responsesAPI{}, `{"id":"resp_67c","object":"response","created_at":1741476542,"status":"completed","error":null,"incomplete_details":null,"model":"gpt-4.1","output":[{"id":"rs_1","type":"reasoning","summary":[]},{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Let me check.","annotations":[]}]},{"id":"fc_1","type":"function_call","status":"completed","arguments":"{\"id\":\"T-1\"}","call_id":"call_1","name":"read_ticket"}],"parallel_tool_calls":true,"usage":{"input_tokens":36,"output_tokens":87,"total_tokens":123},"metadata":{}}`,
		faults.ModelMessage{Text: "Let me check.", ToolCalls: []faults.ToolCall{{ID: "call_1", Name: "read_ticket", Arguments: `{"id":"T-1"}`}}, FinishReason: "tool_calls"}},
	{responsesAPI{}, `{"id":"resp_2","object":"response","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[{"id":"msg_2","type":"message","status":"incomplete","role":"assistant","content":[{"type":"output_text","text":"Partial","annotations":[]}]}]}`,
		faults.ModelMessage{Text: "Partial", FinishReason: "length"}},
	{messagesAPI{}, `{"id":"msg_01X","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"thinking","thinking":"The email asks for urgent.","signature":"sig=="},{"type":"text","text":"Setting the priority."},{"type":"tool_use","id":"toolu_01","name":"update_ticket","input":{"value":"urgent","field":"priority"}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":472,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":89,"service_tier":"standard"}}`,
		faults.ModelMessage{Text: "Setting the priority.", ToolCalls: []faults.ToolCall{{ID: "toolu_01", Name: "update_ticket", Arguments: `{"value":"urgent","field":"priority"}`}}, FinishReason: "tool_calls"}},
	{messagesAPI{}, `{"id":"msg_02","type":"message","role":"assistant","model":"claude","content":[],"stop_reason":"refusal","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":0}}`,
		faults.ModelMessage{FinishReason: "content_filter"}},
}

// TestCodecRoundTrip: decoding and encoding an unchanged message gives back the same
// bytes, and streaming a response then assembling the stream gives back the response.
func TestCodecRoundTrip(t *testing.T) {
	for i, s := range codecSamples {
		t.Run(fmt.Sprintf("%s-%d", s.api.Name(), i), func(t *testing.T) {
			full, err := parseObject([]byte(s.body))
			if err != nil {
				t.Fatal(err)
			}
			m, err := s.api.decode(full)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(m, s.want) {
				t.Errorf("decoded\n %#v\nwant\n %#v", m, s.want)
			}
			if err := s.api.encode(full, m); err != nil {
				t.Fatal(err)
			}
			if got := string(encodeJSON(full)); got != s.body {
				t.Errorf("re-encoded unchanged:\n%s\nwant\n%s", got, s.body)
			}
			for _, chunk := range []int{0, 1, 5} {
				stream := s.api.stream(full, chunk)
				back, err := s.api.assemble(parseSSE(stream))
				if err != nil {
					t.Fatalf("chunk %d: %v\n%s", chunk, err, stream)
				}
				bm, err := s.api.decode(back)
				if err != nil || !reflect.DeepEqual(bm, s.want) {
					t.Errorf("chunk %d: the stream decodes to %#v (%v)", chunk, bm, err)
				}
				if _, ok := s.api.(chatAPI); !ok { // Chat streams have no place for every field
					if got, want := string(encodeJSON(back)), string(encodeJSON(full)); got != want {
						t.Errorf("chunk %d: assembled\n%s\nwant\n%s", chunk, got, want)
					}
				}
			}
		})
	}
}

// TestCodecKeepsFields: a mutation changes what it must, in the API's vocabulary, and
// keeps the rest (ids, model, usage, reasoning and thinking).
func TestCodecKeepsFields(t *testing.T) {
	tests := []struct {
		sample int
		m      faults.ModelMessage
		want   string
	}{
		{0, faults.ModelMessage{Text: faults.TextContentFiltered, FinishReason: "content_filter"},
			`{"id":"chatcmpl-AbC","object":"chat.completion","created":1741570283,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"message":{"role":"assistant","content":"[CONTENT FILTERED] This response has been blocked by the content safety filter.","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"content_filter"}],"usage":{"prompt_tokens":82,"completion_tokens":17,"total_tokens":99,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0}},"service_tier":"default","system_fingerprint":"fp_6ec83003ad"}`},
		{2, faults.ModelMessage{Text: "Let", FinishReason: "length"},
			`{"id":"resp_67c","object":"response","created_at":1741476542,"status":"incomplete","error":null,"incomplete_details":{"reason":"max_output_tokens"},"model":"gpt-4.1","output":[{"id":"rs_1","type":"reasoning","summary":[]},{"id":"msg_1","type":"message","status":"incomplete","role":"assistant","content":[{"type":"output_text","text":"Let","annotations":[]}]}],"parallel_tool_calls":true,"usage":{"input_tokens":36,"output_tokens":87,"total_tokens":123},"metadata":{}}`},
		{2, faults.ModelMessage{ToolCalls: []faults.ToolCall{{ID: "call_1", Name: "read_ticket", Arguments: "{}"}}, FinishReason: "tool_calls"},
			`{"id":"resp_67c","object":"response","created_at":1741476542,"status":"completed","error":null,"incomplete_details":null,"model":"gpt-4.1","output":[{"id":"rs_1","type":"reasoning","summary":[]},{"id":"fc_1","type":"function_call","status":"completed","arguments":"{}","call_id":"call_1","name":"read_ticket"}],"parallel_tool_calls":true,"usage":{"input_tokens":36,"output_tokens":87,"total_tokens":123},"metadata":{}}`},
		{4, faults.ModelMessage{Text: faults.TextToolTimeout, FinishReason: "stop"},
			`{"id":"msg_01X","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"thinking","thinking":"The email asks for urgent.","signature":"sig=="},{"type":"text","text":"[TIMEOUT] Connection dropped. The server did not respond."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":472,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":89,"service_tier":"standard"}}`},
		{4, faults.ModelMessage{ToolCalls: []faults.ToolCall{{ID: "toolu_01", Name: "update_ticket", Arguments: `{"wrong_param":"unexpected_value"}`}}, FinishReason: "tool_calls"},
			`{"id":"msg_01X","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"thinking","thinking":"The email asks for urgent.","signature":"sig=="},{"type":"tool_use","id":"toolu_01","name":"update_ticket","input":{"wrong_param":"unexpected_value"}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":472,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":89,"service_tier":"standard"}}`},
		{5, faults.ModelMessage{Text: "x", FinishReason: "length"},
			`{"id":"msg_02","type":"message","role":"assistant","model":"claude","content":[{"type":"text","text":"x"}],"stop_reason":"max_tokens","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":0}}`},
	}
	for _, tt := range tests {
		s := codecSamples[tt.sample]
		full, _ := parseObject([]byte(s.body))
		if err := s.api.encode(full, tt.m); err != nil {
			t.Fatal(err)
		}
		if got := string(encodeJSON(full)); got != tt.want {
			t.Errorf("%s sample %d:\n got %s\nwant %s", s.api.Name(), tt.sample, got, tt.want)
		}
		back, _ := s.api.decode(full)
		if !reflect.DeepEqual(back, tt.m) {
			t.Errorf("%s sample %d: decodes back to %#v", s.api.Name(), tt.sample, back)
		}
	}
}

// TestCodecUpstreamStreams: streams as the real APIs send them (usage nulls, pings,
// several deltas per call) assemble into the message they carry.
func TestCodecUpstreamStreams(t *testing.T) {
	tests := []struct {
		api    modelAPI
		stream string
		want   faults.ModelMessage
	}{
		{chatAPI{}, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"update_ticket\",\"arguments\":\"\"}}]},\"finish_reason\":null}],\"usage\":null}\n\n" +
			"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"field\\\":\"}}]},\"finish_reason\":null}],\"usage\":null}\n\n" +
			"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"team\\\"}\"}}]},\"finish_reason\":null}],\"usage\":null}\n\n" +
			"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}],\"usage\":null}\n\n" +
			"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2,\"total_tokens\":7}}\n\n" +
			"data: [DONE]\n\n",
			faults.ModelMessage{ToolCalls: []faults.ToolCall{{ID: "call_1", Name: "update_ticket", Arguments: `{"field":"team"}`}}, FinishReason: "tool_calls"}},
		{messagesAPI{}, "event: message_start\r\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":25,\"output_tokens\":1}}}\r\n\r\n" +
			"event: ping\r\ndata: {\"type\":\"ping\"}\r\n\r\n" +
			"event: content_block_start\r\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\r\n\r\n" +
			"event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Okay, \"}}\r\n\r\n" +
			"event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"setting it.\"}}\r\n\r\n" +
			"event: content_block_stop\r\ndata: {\"type\":\"content_block_stop\",\"index\":0}\r\n\r\n" +
			"event: content_block_start\r\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"update_ticket\",\"input\":{}}}\r\n\r\n" +
			"event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\"}}\r\n\r\n" +
			"event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"field\\\": \\\"te\"}}\r\n\r\n" +
			"event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"am\\\"}\"}}\r\n\r\n" +
			"event: content_block_stop\r\ndata: {\"type\":\"content_block_stop\",\"index\":1}\r\n\r\n" +
			"event: message_delta\r\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":15}}\r\n\r\n" +
			"event: message_stop\r\ndata: {\"type\":\"message_stop\"}\r\n\r\n",
			faults.ModelMessage{Text: "Okay, setting it.", ToolCalls: []faults.ToolCall{{ID: "toolu_1", Name: "update_ticket", Arguments: `{"field":"team"}`}}, FinishReason: "tool_calls"}},
	}
	for _, tt := range tests {
		full, err := tt.api.assemble(parseSSE([]byte(tt.stream)))
		if err != nil {
			t.Fatalf("%s: %v", tt.api.Name(), err)
		}
		m, err := tt.api.decode(full)
		if err != nil || !reflect.DeepEqual(m, tt.want) {
			t.Errorf("%s: %#v (%v), want %#v", tt.api.Name(), m, err, tt.want)
		}
		if u := full.obj("usage"); u == nil || u.num("output_tokens")+u.num("completion_tokens") == 0 {
			t.Errorf("%s: usage lost: %s", tt.api.Name(), encodeJSON(full))
		}
	}
}

// BenchmarkLLMProxy measures the latency the proxy adds when no fault fires at the
// position, to the first byte and to the last, streamed and not, as a ratio to a
// direct call to the same stand-in model.
func BenchmarkLLMProxy(b *testing.B) {
	upstream := llmStandin(b, llmScript(b, ""))
	url, _ := llmProxy(b, ModelProxyConfig{Upstream: upstream, Fault: "llm_error_single", Steps: []string{"never"}})
	for _, a := range llmAPIs {
		for _, stream := range []bool{false, true} {
			mode := "json"
			if stream {
				mode = "sse"
			}
			b.Run(a.api.Name()+"-"+mode, func(b *testing.B) {
				body := llmRequest(a.api, 3, stream)
				var direct, proxied [2]time.Duration
				for b.Loop() {
					f, l := llmTimed(b, upstream+a.path, body)
					direct[0], direct[1] = direct[0]+f, direct[1]+l
					f, l = llmTimed(b, url+a.path, body)
					proxied[0], proxied[1] = proxied[0]+f, proxied[1]+l
				}
				b.ReportMetric(float64(proxied[0])/float64(direct[0]), "first-byte-ratio")
				b.ReportMetric(float64(proxied[1])/float64(direct[1]), "last-byte-ratio")
			})
		}
	}
}

// llmTimed posts body and returns the time to the first byte of the answer and to
// its last.
func llmTimed(tb testing.TB, url string, body []byte) (first, last time.Duration) {
	tb.Helper()
	start := time.Now()
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	var one [1]byte
	if _, err := io.ReadFull(resp.Body, one[:]); err != nil {
		tb.Fatal(err)
	}
	first = time.Since(start)
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		tb.Fatal(err)
	}
	return first, time.Since(start)
}

// TestLLMUndeclaredCalls: once an agent declares positions, a call outside every declared
// position passes untouched; ordinals (call-N) are the handle only for an agent that
// declares none.
func TestLLMUndeclaredCalls(t *testing.T) {
	upstream := llmStandin(t, llmScript(t, ""))
	tests := []struct {
		name      string
		steps     []string
		positions []string // "" for a call without X-Chaos-Position
		faulted   []bool
	}{
		{"declares none: every ordinal", nil, []string{"", "", ""}, []bool{true, true, true}},
		{"declares none: the ordinal steps", []string{"call-2"}, []string{"", "", ""}, []bool{false, true, false}},
		{"declares: undeclared calls after pass", nil, []string{"plan", "", "summarize", ""}, []bool{true, false, true, false}},
		{"steps name positions: undeclared calls pass from the first", []string{"plan"}, []string{"", "plan", ""}, []bool{false, true, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, _ := llmProxy(t, ModelProxyConfig{Upstream: upstream, Fault: "llm_error_single", Steps: tt.steps, Seed: 1})
			for i, pos := range tt.positions {
				h := map[string]string{}
				if pos != "" {
					h[PositionHeader] = pos
				}
				_, body := llmPost(t, url+"/v1/chat/completions", llmRequest(chatAPI{}, 3, false), h)
				if got := bytes.Contains(body, []byte("[API ERROR]")); got != tt.faulted[i] {
					t.Errorf("call %d (position %q): faulted %v, want %v", i+1, pos, got, tt.faulted[i])
				}
			}
		})
	}
}

// TestLLMStreamCutOff: a streamed answer that ends early is recorded as cut off, never
// summarised as if whole: when the upstream breaks off mid-stream (the agent gets the
// events that came and then an error), and when the agent stops reading mid-stream.
func TestLLMStreamCutOff(t *testing.T) {
	for _, tt := range []struct {
		name string
		// agentLeaves: the agent reads the first event and goes; else the upstream breaks off.
		agentLeaves bool
	}{{"upstream breaks off", false}, {"agent stops reading", true}} {
		t.Run(tt.name, func(t *testing.T) {
			release := make(chan struct{})
			upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"m\"}}\n\n")
				w.(http.Flusher).Flush()
				if !tt.agentLeaves {
					panic(http.ErrAbortHandler) // the connection drops mid-stream
				}
				select { // the agent has gone, or the test ends
				case <-r.Context().Done():
				case <-release:
				}
			}))
			t.Cleanup(upstream.Close)
			t.Cleanup(func() { close(release) })
			rec, _ := llmRecord(t)
			rows := make(chan record.Row, 4)
			rec.OnRow(func(r record.Row) { rows <- r })
			url, _ := llmProxy(t, ModelProxyConfig{Upstream: upstream.URL, Record: rec})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/messages", bytes.NewReader(llmRequest(messagesAPI{}, 0, true)))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			first := make([]byte, 16)
			if _, err := io.ReadFull(resp.Body, first); err != nil || !strings.HasPrefix(string(first), "event: message_") {
				t.Fatalf("first bytes %q, %v", first, err)
			}
			if tt.agentLeaves {
				cancel()
			} else if _, err := io.ReadAll(resp.Body); err == nil {
				t.Error("the agent read a whole answer from a stream the upstream broke off")
			}
			resp.Body.Close()
			select {
			case r := <-rows:
				if r.Type != record.TypeCall || !strings.HasPrefix(r.Reply, "(the response was cut off: ") {
					t.Errorf("row %+v, want a call whose reply says it was cut off", r)
				}
			case <-time.After(time.Minute):
				t.Fatal("no row for the call a minute after it ended")
			}
		})
	}
}
