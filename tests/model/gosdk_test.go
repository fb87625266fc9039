package model

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/crashwall/chaos"
	"github.com/crashwall/chaos/proxies/httpwall"
	"github.com/crashwall/chaos/proxies/llm"
	"github.com/crashwall/chaos/record"
)

// TestGoAgentDeclaresPositions: an agent written in Go with the official openai-go SDK
// declares its steps with chaos.Position and chaos.Transport. The model proxy (in front
// of the stand-in model) reads the declared positions, so a fault armed for one step
// lands on that step's call and only there, however many calls come before it; the
// headers never reach the model; a call without a position stands at its ordinal.
func TestGoAgentDeclaresPositions(t *testing.T) {
	var seen []http.Header
	standin := llm.NewStandin(llm.Script{{When: llm.WhenStart, Text: "Ticket T-4821 is now urgent."}})
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Clone())
		standin.ServeHTTP(w, r)
	}))
	t.Cleanup(upstream.Close)

	path := filepath.Join(t.TempDir(), "record.jsonl")
	rec, err := record.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := llm.NewModelProxy(llm.ModelProxyConfig{Upstream: upstream.URL, Fault: "llm_error_single", Rate: 1, Steps: []string{"summarize"}, Seed: 7, Record: rec})
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewServer(http.StripPrefix(httpwall.ModelPrefix, p))
	t.Cleanup(proxy.Close)

	client := openai.NewClient(
		option.WithBaseURL(proxy.URL+httpwall.ModelPrefix+"/v1"),
		option.WithAPIKey("sk-test-not-a-key"),
		option.WithHTTPClient(&http.Client{Transport: chaos.Transport(nil)}),
		option.WithMaxRetries(0),
	)
	ask := func(ctx context.Context) (string, error) {
		resp, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model:    "stand-in",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Set ticket T-4821 to urgent.")},
		})
		if err != nil {
			return "", err
		}
		return resp.Choices[0].Message.Content, nil
	}

	ctx := context.Background()
	var got []string
	for _, step := range []struct {
		name    string
		attempt int
	}{{"plan", 1}, {"choose_tool", 1}, {"choose_tool", 2}, {"summarize", 1}, {"", 0}} {
		c := ctx
		if step.name != "" {
			c = chaos.Position(ctx, step.name, step.attempt)
		}
		text, err := ask(c)
		if err != nil {
			t.Fatalf("step %q: %v", step.name, err)
		}
		got = append(got, text)
	}
	rec.Close(record.Row{Reason: "test over"})

	const faulted = "[API ERROR] HTTP 500: Internal Server Error. The server encountered an unexpected condition."
	want := []string{"Ticket T-4821 is now urgent.", "Ticket T-4821 is now urgent.", "Ticket T-4821 is now urgent.", faulted, "Ticket T-4821 is now urgent."}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("call %d: the agent got %q, want %q", i+1, got[i], want[i])
		}
	}
	for i, h := range seen {
		for k := range h {
			if strings.HasPrefix(strings.ToLower(k), "x-chaos-") {
				t.Errorf("call %d reached the model with the header %s", i+1, k)
			}
		}
	}

	l, err := record.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var positions []string
	for _, r := range l.Calls() {
		var a struct {
			Position string `json:"position"`
			Attempt  int    `json:"attempt"`
		}
		if err := json.Unmarshal(r.Args, &a); err != nil {
			t.Fatal(err)
		}
		positions = append(positions, a.Position+"#"+string(rune('0'+a.Attempt)))
		if fired := r.Hit != nil && r.Hit.Fired; fired != (a.Position == "summarize") {
			t.Errorf("position %s: fired %v", a.Position, fired)
		}
	}
	if strings.Join(positions, " ") != "plan#1 choose_tool#1 choose_tool#2 summarize#1 call-5#1" {
		t.Errorf("recorded positions %v, want plan#1 choose_tool#1 choose_tool#2 summarize#1 call-5#1", positions)
	}

	// The transport leaves the caller's request alone and passes an undeclared call as it is.
	req, _ := http.NewRequestWithContext(chaos.Position(ctx, "x", 0), http.MethodGet, upstream.URL, nil)
	var sent http.Header
	rt := chaos.Transport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent = r.Header
		return nil, errors.New("not sent")
	}))
	rt.RoundTrip(req)
	if req.Header.Get(chaos.PositionHeader) != "" || sent.Get(chaos.PositionHeader) != "x" || sent.Get(chaos.AttemptHeader) != "1" {
		t.Errorf("the caller's request has %v, the one sent %v; want the headers on the sent one only, attempt 1", req.Header, sent)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
