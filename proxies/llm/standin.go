package llm

// The stand-in model: an offline server of the three model APIs that answers by a
// script, so that a real agent client runs end to end with no key (`chaos model
// standin --script FILE`, and the model proxy's tests).
//
//	request ──> count the runs of tool results in the conversation (k)
//	            k = 0, last message from the user ──> the start step
//	            last message a tool result        ──> the k-th tool_result step
//	        ──> the step's tool call or text, in the API's shape, streamed or not

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/crashwall/chaos/cost"
	"github.com/crashwall/chaos/faults"
)

// The moments a script step answers.
const (
	WhenStart      = "start"
	WhenToolResult = "tool_result"
)

// ScriptStep is one answer of the stand-in model: a tool call (Tool and Arguments)
// or a text.
type ScriptStep struct {
	// When is start (the user's request, before any tool result) or tool_result
	// (after the agent sent tool results). Empty: start for the first step,
	// tool_result for the others.
	When      string         `json:"when,omitempty" yaml:"when,omitempty"`
	Tool      string         `json:"tool,omitempty" yaml:"tool,omitempty"`
	Arguments map[string]any `json:"arguments,omitempty" yaml:"arguments,omitempty"`
	Text      string         `json:"text,omitempty" yaml:"text,omitempty"`
	// Usage is the usage the answer declares (nil: about a token per four bytes of the
	// request and of the answer), so that a test knows what a trial must have spent.
	Usage *cost.Tokens `json:"usage,omitempty" yaml:"usage,omitempty"`
	// Unoffered, on a tool step, is the text answered instead when the request does not
	// offer the tool (no tools at all, or none of that name), as a real model cannot
	// call a tool it was not given: an agent whose tools were filtered out gets a text.
	// Empty: the call is made whatever the request offers (standin_offered.go).
	Unoffered string `json:"unoffered,omitempty" yaml:"unoffered,omitempty"`
}

// Script is what the stand-in model answers, step by step.
type Script []ScriptStep

// LoadScript reads a script from a YAML or JSON file: a list of steps.
func LoadScript(path string) (Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read script: %w", err)
	}
	var s Script
	if err := yaml.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := s.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Check reports the first step that cannot be answered.
func (s Script) Check() error {
	if len(s) == 0 {
		return fmt.Errorf("the script has no steps")
	}
	for i, st := range s {
		switch {
		case st.When != "" && st.When != WhenStart && st.When != WhenToolResult:
			return fmt.Errorf("step %d: when is %q; it must be %s or %s", i+1, st.When, WhenStart, WhenToolResult)
		case st.Tool == "" && st.Text == "":
			return fmt.Errorf("step %d: a step calls a tool (tool:) or answers a text (text:)", i+1)
		case st.Tool != "" && st.Text != "":
			return fmt.Errorf("step %d: a step calls a tool or answers a text, not both", i+1)
		case st.Tool == "" && st.Arguments != nil:
			return fmt.Errorf("step %d: arguments without a tool", i+1)
		case st.Tool == "" && st.Unoffered != "":
			return fmt.Errorf("step %d: unoffered without a tool", i+1)
		}
	}
	return nil
}

// when is the step's moment with the default filled in.
func (s Script) when(i int) string {
	if s[i].When != "" {
		return s[i].When
	}
	if i == 0 {
		return WhenStart
	}
	return WhenToolResult
}

// standin serves a script.
type standin struct {
	script Script
	err    error
}

// NewStandin returns the stand-in model serving script:
//
//	POST .../chat/completions   OpenAI Chat Completions
//	POST .../responses          OpenAI Responses
//	POST .../messages           Anthropic Messages
//
// each streamed ("stream": true) or not. Ids are deterministic: the same
// conversation gets the same answer, byte for byte. An invalid script answers every
// call with 500 and the reason.
func NewStandin(script Script) http.Handler {
	return &standin{script: script, err: script.Check()}
}

func (s *standin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	api := apiFor(r.Method, r.URL.Path)
	if api == nil {
		writeModelError(w, http.StatusNotFound, fmt.Sprintf("the stand-in model serves POST /v1/chat/completions, /v1/responses and /v1/messages, not %s %s", r.Method, r.URL.Path))
		return
	}
	if s.err != nil {
		writeModelError(w, http.StatusInternalServerError, "stand-in model: "+s.err.Error())
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxModelBody))
	if err != nil {
		writeModelError(w, http.StatusBadRequest, "stand-in model: reading the request: "+err.Error())
		return
	}
	req, err := parseObject(body)
	if err != nil {
		writeModelError(w, http.StatusBadRequest, "stand-in model: the request is not a JSON object: "+err.Error())
		return
	}
	rq := api.readRequest(req)
	turn := rq.ResultGroups
	if base, ok := strings.CutPrefix(rq.PreviousResponse, "resp_standin_"); ok {
		// The Responses API with server-side state: the earlier turns are not resent.
		n, _ := strconv.Atoi(base)
		turn += n
	}
	m := s.answer(rq, turn, api.callID(turn))
	m = s.unoffered(req, rq, turn, m) // standin_offered.go
	model := rq.Model
	if model == "" {
		model = "standin"
	}
	out := utf8.RuneCountInString(m.Text) / 4
	for _, tc := range m.ToolCalls {
		out += (len(tc.Name) + len(tc.Arguments)) / 4
	}
	full := api.skeleton(turn, model, len(body)/4+1, out+1)
	if step, ok := s.step(rq, turn); ok && step.Usage != nil {
		declareUsage(api, full, *step.Usage)
	}
	if err := api.encode(full, m); err != nil {
		writeModelError(w, http.StatusInternalServerError, "stand-in model: "+err.Error())
		return
	}
	if _, ok := api.(responsesAPI); ok {
		placeNamespaces(req, full) // standin_namespace.go
	}
	if !rq.Stream {
		w.Header().Set("Content-Type", "application/json")
		w.Write(encodeJSON(full))
		return
	}
	if _, ok := api.(chatAPI); ok && !rq.IncludeUsage {
		full.del("usage") // OpenAI sends usage in a stream only when asked to
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(api.stream(full, standinChunk))
}

// standinChunk is how many bytes of text or arguments the stand-in streams per
// event: small, so that clients assemble several.
const standinChunk = 16

// answer picks the step for a conversation and turns it into a message.
func (s *standin) answer(rq modelRequest, turn int, callID string) faults.ModelMessage {
	step, ok := s.step(rq, turn)
	if !ok {
		return faults.ModelMessage{Text: fmt.Sprintf("[stand-in model] the script has no step after %d tool results.", turn), FinishReason: faults.FinishStop}
	}
	if step.Text != "" {
		return faults.ModelMessage{Text: step.Text, FinishReason: faults.FinishStop}
	}
	args := step.Arguments
	if args == nil {
		args = map[string]any{}
	}
	return faults.ModelMessage{
		ToolCalls:    []faults.ToolCall{{ID: callID, Name: step.Tool, Arguments: string(encodeJSON(args))}},
		FinishReason: faults.FinishToolCalls,
	}
}

func (s *standin) step(rq modelRequest, turn int) (ScriptStep, bool) {
	if !rq.EndsWithToolResult {
		first := -1
		for i := range s.script {
			if s.script.when(i) == WhenStart {
				return s.script[i], true
			}
			if first < 0 && s.script[i].Tool != "" {
				first = i
			}
		}
		if first < 0 {
			first = 0
		}
		return s.script[first], true
	}
	n := 0
	for i := range s.script {
		if s.script.when(i) != WhenToolResult {
			continue
		}
		n++
		if n == turn {
			return s.script[i], true
		}
	}
	return ScriptStep{}, false
}
