package model

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
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
	"github.com/crashwall/chaos/proxies/llm"
	"github.com/crashwall/chaos/record"
)

// The conversation of the llm package's golden tests (proxies/llm/proxy_test.go): the
// tool calls the model made and what the tools answered. A tool fault's golden is on
// the turn after one result (the model calls update_ticket), a text fault's after three
// (the model says it is done).
var goldenTurns = []clientTurn{
	{"read_email", `{}`, `{"ticket": "T-4821", "from": "dana@example.com", "body": "This is urgent, please route to the payments team."}`},
	{"update_ticket", `{"field":"priority","value":"urgent"}`, `{"status": "updated"}`},
	{"update_ticket", `{"field":"team","value":"payments"}`, `{"status": "updated"}`},
}

// goldenText is the stand-in's closing text in the goldens: not plain ASCII, so
// llm_corrupt_single has something to garble.
const goldenText = "Done. Priority urgent, team payments — Zoë has been told."

// goldenContext is what the goldens' spec declares for the compound faults.
var goldenContext = faults.ModelContext{
	StaleValues: map[string][]any{"value": {"normal"}},
	Entities:    map[string][]string{"field": {"priority", "team"}},
}

type clientTurn struct {
	Tool   string `json:"tool"`
	Args   string `json:"args"`
	Result string `json:"result"`
}

// clientCase is one call tests/js/model-clients.mjs makes.
type clientCase struct {
	Name     string       `json:"name"`
	API      string       `json:"api"`
	Stream   bool         `json:"stream"`
	BaseURL  string       `json:"baseURL"`
	Position string       `json:"position"`
	Turns    []clientTurn `json:"turns"`
}

// clientView is what a client made of a response.
type clientView struct {
	Name      string `json:"name,omitempty"`
	Text      string `json:"text"`
	ToolCalls []struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"tool_calls"`
	Finish string `json:"finish"`
	Raw    string `json:"raw,omitempty"`
	Error  string `json:"error,omitempty"`
}

// The APIs, with the prefix of their golden files.
var clientAPIs = []struct{ api, golden string }{
	{"chat", "openai-chat"},
	{"responses", "openai-responses"},
	{"messages", "anthropic-messages"},
}

// toolFault says whether a fault's golden is on the tool-calling turn.
func toolFault(name string) bool {
	return strings.HasPrefix(name, "tool_") || name == "compound_stale_data" || name == "compound_wrong_entity" || name == "compound_content_filter"
}

// TestSDKClientsThroughProxy: the `openai` package (chat.completions.create and
// responses.create) and `@anthropic-ai/sdk` (messages.create), streamed and not, pointed
// at the model proxy in front of the stand-in model. For every fault the client receives
// what the proxies package's golden file says (the same text, tool calls and finish
// reason in the API's words, the same delay); with no fault it receives the stand-in's
// response byte for byte; a fault that cannot apply reaches the client as an error it
// does not retry.
func TestSDKClientsThroughProxy(t *testing.T) {
	script, err := llm.LoadScript(filepath.Join(repoRoot, "proxies", "llm", "testdata", "support-ticket.script.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	script[len(script)-1].Text = goldenText
	standin := httptest.NewServer(llm.NewStandin(script))
	t.Cleanup(standin.Close)

	// One proxy per fault, as each trial has its own: /<fault>/ on one test server.
	type armed struct {
		proxy  *llm.ModelProxy
		record string
		mu     sync.Mutex
		slept  []time.Duration
	}
	proxied := map[string]*armed{}
	mux := http.NewServeMux()
	names := append(faults.ModelFaultNames(), "refusal")
	for _, name := range names {
		fault := name
		if name == "refusal" {
			fault = "tool_error_single" // on the text turn: no tool call to break
		}
		a := &armed{record: filepath.Join(t.TempDir(), name+".jsonl")}
		rec, err := record.Open(a.record)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rec.Close(record.Row{Reason: "test over"}) })
		a.proxy, err = llm.NewModelProxy(llm.ModelProxyConfig{
			Upstream: standin.URL, Fault: fault, Seed: 7, Context: goldenContext, Record: rec,
			Sleep: func(ctx context.Context, d time.Duration) error {
				a.mu.Lock()
				a.slept = append(a.slept, d)
				a.mu.Unlock()
				return nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		proxied[name] = a
		mux.Handle("/"+name+"/", http.StripPrefix("/"+name, a.proxy))
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	// The base URL each SDK takes: OpenAI's carries /v1, Anthropic's does not. The
	// upstream here is the stand-in's root, so {llm_url} + /v1 is OpenAI's.
	baseURL := func(root, api string) string {
		if api == "messages" {
			return root
		}
		return root + "/v1"
	}
	var cases []clientCase
	for _, name := range names {
		turns := goldenTurns
		if toolFault(name) {
			turns = goldenTurns[:1]
		}
		for _, a := range clientAPIs {
			for _, stream := range []bool{false, true} {
				cases = append(cases, clientCase{Name: caseName(name, a.api, stream), API: a.api, Stream: stream,
					BaseURL: baseURL(srv.URL+"/"+name, a.api), Position: "golden", Turns: turns})
			}
		}
	}
	for _, a := range clientAPIs { // the clean response, straight from the stand-in
		for _, stream := range []bool{false, true} {
			cases = append(cases, clientCase{Name: caseName("direct", a.api, stream), API: a.api, Stream: stream,
				BaseURL: baseURL(standin.URL, a.api), Position: "golden", Turns: goldenTurns})
		}
	}
	views := runClients(t, cases)

	for _, name := range names {
		for _, a := range clientAPIs {
			for _, stream := range []bool{false, true} {
				cn := caseName(name, a.api, stream)
				t.Run(cn, func(t *testing.T) {
					got := views[cn]
					if name == "refusal" {
						if got.Error == "" || !strings.Contains(got.Error, "502") || !strings.Contains(got.Error, "model fault could not apply") {
							t.Errorf("the client got %+v; want a 502 error saying the model fault could not apply", got)
						}
						return
					}
					if got.Error != "" {
						t.Fatalf("the client failed: %s", got.Error)
					}
					want, _ := goldenView(t, a.golden, name)
					if !sameView(got, want) {
						t.Errorf("the client got\n %s\nthe golden (%s-json-%s.txt) says\n %s", viewString(got), a.golden, name, viewString(want))
					}
					if name == faults.NoModelFault {
						if direct := views[caseName("direct", a.api, stream)]; got.Raw != direct.Raw {
							t.Errorf("with no fault the client got\n%s\nthe stand-in answers\n%s", got.Raw, direct.Raw)
						}
					}
				})
			}
		}
		// Each proxy saw its six calls once each (no retry), with the golden's delay.
		t.Run(name+"/proxy", func(t *testing.T) {
			a := proxied[name]
			st := a.proxy.Stats()
			want := llm.ModelStats{Calls: 6, Fired: 6}
			switch name {
			case faults.NoModelFault:
				want.Fired = 0
			case "refusal":
				want = llm.ModelStats{Calls: 6, Failed: 6}
			}
			if st != want {
				t.Errorf("stats %+v, want %+v", st, want)
			}
			if name == "refusal" {
				return
			}
			_, delay := goldenView(t, "openai-chat", name)
			a.mu.Lock()
			defer a.mu.Unlock()
			for _, d := range a.slept {
				if d != delay {
					t.Errorf("the proxy held a response %s, the golden says %s", d, delay)
				}
			}
			if name != faults.NoModelFault && len(a.slept) != 6 {
				t.Errorf("%d delays, want one per call", len(a.slept))
			}
			l, err := record.ReadFile(a.record)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(l.Fired()); n != want.Fired {
				t.Errorf("%d fired rows in the record, want %d", n, want.Fired)
			}
			for _, r := range l.Rows {
				if r.Transport != llm.TransportLLM || !strings.Contains(string(r.Args), `"position":"golden"`) {
					t.Errorf("record row %+v: want a model call at position golden", r)
				}
			}
		})
	}
}

func caseName(fault, api string, stream bool) string {
	mode := "json"
	if stream {
		mode = "sse"
	}
	return fault + "/" + api + "-" + mode
}

// runClients runs every case through tests/js/model-clients.mjs.
func runClients(t *testing.T, cases []clientCase) map[string]clientView {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cases.json")
	b, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out := runNode(t, 3*time.Minute, "model-clients.mjs", path)
	var views []clientView
	if err := json.Unmarshal(out, &views); err != nil {
		t.Fatalf("model-clients.mjs printed %q: %v", out, err)
	}
	if len(views) != len(cases) {
		t.Fatalf("%d results for %d cases", len(views), len(cases))
	}
	byName := map[string]clientView{}
	for _, v := range views {
		byName[v.Name] = v
	}
	return byName
}

// goldenView reads what the golden file of the API's non-streamed response says the
// client receives, in the terms the client script prints, and the delay it records.
func goldenView(t *testing.T, api, fault string) (clientView, time.Duration) {
	t.Helper()
	path := filepath.Join(repoRoot, "proxies", "llm", "testdata", "golden", api+"-json-"+fault+".txt")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var delay time.Duration
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() && sc.Text() != "" {
		if d, ok := strings.CutPrefix(sc.Text(), "delay: "); ok {
			if delay, err = time.ParseDuration(d); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
		}
	}
	var body strings.Builder
	for sc.Scan() {
		body.WriteString(sc.Text())
	}
	var v clientView
	add := func(name, args string) {
		v.ToolCalls = append(v.ToolCalls, struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		}{name, args})
	}
	switch api {
	case "openai-chat":
		var r struct {
			Choices []struct {
				Message struct {
					Content   *string `json:"content"`
					ToolCalls []struct {
						Function struct{ Name, Arguments string } `json:"function"`
					} `json:"tool_calls"`
				} `json:"message"`
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
		}
		mustJSON(t, path, body.String(), &r)
		c := r.Choices[0]
		if c.Message.Content != nil {
			v.Text = *c.Message.Content
		}
		for _, tc := range c.Message.ToolCalls {
			add(tc.Function.Name, tc.Function.Arguments)
		}
		v.Finish = c.FinishReason
	case "openai-responses":
		var r struct {
			Status            string `json:"status"`
			IncompleteDetails *struct {
				Reason string `json:"reason"`
			} `json:"incomplete_details"`
			Output []struct {
				Type      string                        `json:"type"`
				Name      string                        `json:"name"`
				Arguments string                        `json:"arguments"`
				Content   []struct{ Type, Text string } `json:"content"`
			} `json:"output"`
		}
		mustJSON(t, path, body.String(), &r)
		for _, item := range r.Output {
			switch item.Type {
			case "message":
				for _, p := range item.Content {
					if p.Type == "output_text" {
						v.Text += p.Text
					}
				}
			case "function_call":
				add(item.Name, item.Arguments)
			}
		}
		v.Finish = r.Status
		if r.Status == "incomplete" && r.IncompleteDetails != nil {
			v.Finish = r.IncompleteDetails.Reason
		}
	case "anthropic-messages":
		var r struct {
			Content []struct {
				Type, Text, Name string
				Input            json.RawMessage `json:"input"`
			} `json:"content"`
			StopReason string `json:"stop_reason"`
		}
		mustJSON(t, path, body.String(), &r)
		for _, b := range r.Content {
			switch b.Type {
			case "text":
				v.Text += b.Text
			case "tool_use":
				add(b.Name, string(b.Input))
			}
		}
		v.Finish = r.StopReason
	}
	return v, delay
}

func mustJSON(t *testing.T, path, body string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// sameView compares text, finish reason and tool calls; arguments as JSON values
// (Anthropic's client hands its input back as an object, re-encoded).
func sameView(a, b clientView) bool {
	if a.Text != b.Text || a.Finish != b.Finish || len(a.ToolCalls) != len(b.ToolCalls) {
		return false
	}
	for i := range a.ToolCalls {
		x, y := a.ToolCalls[i], b.ToolCalls[i]
		if x.Name != y.Name {
			return false
		}
		var xv, yv any
		if json.Unmarshal([]byte(x.Arguments), &xv) != nil || json.Unmarshal([]byte(y.Arguments), &yv) != nil {
			if x.Arguments != y.Arguments {
				return false
			}
			continue
		}
		if !reflect.DeepEqual(xv, yv) {
			return false
		}
	}
	return true
}

func viewString(v clientView) string {
	var calls []string
	for _, tc := range v.ToolCalls {
		calls = append(calls, tc.Name+" "+tc.Arguments)
	}
	return fmt.Sprintf("text %q, tool calls %q, finish %q", v.Text, calls, v.Finish)
}
