package reviewer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// The model APIs a reviewer speaks.
const (
	APIChat      = "chat"      // OpenAI Chat Completions: POST BASE/chat/completions
	APIResponses = "responses" // OpenAI Responses: POST BASE/responses
	APIMessages  = "messages"  // Anthropic Messages: POST BASE/v1/messages
)

// Reviewer asks a model. A failed call, an answer that is not the schema and a model
// that says so are all Unsure: a reviewer never makes a verdict up.
type Reviewer struct {
	// API is APIChat, APIResponses or APIMessages.
	API string
	// BaseURL is the API's base as its SDK takes it (https://api.openai.com/v1,
	// https://api.anthropic.com).
	BaseURL string
	Model   string
	// APIKey is sent as the API wants it; it is never part of an answer or an error.
	APIKey string
	// HTTP is the client (nil: one with a 2-minute timeout).
	HTTP *http.Client
}

// maxAnswer bounds the response read.
const maxAnswer = 1 << 20

// Review asks the model about c.
func (r Reviewer) Review(ctx context.Context, c Case) Answer {
	by := "model:" + r.Model
	a, err := r.review(ctx, c)
	if err != nil {
		return Answer{Verdict: Unsure, Reason: "the reviewer could not answer: " + err.Error(), By: by}
	}
	a.By = by
	return a
}

func (r Reviewer) review(ctx context.Context, c Case) (Answer, error) {
	user, err := Prompt(c)
	if err != nil {
		return Answer{}, err
	}
	base := strings.TrimRight(r.BaseURL, "/")
	var url string
	var body map[string]any
	switch r.API {
	case APIChat, "":
		url = base + "/chat/completions"
		body = map[string]any{"model": r.Model, "temperature": 0, "messages": []map[string]string{
			{"role": "system", "content": SystemPrompt}, {"role": "user", "content": user}}}
	case APIResponses:
		url = base + "/responses"
		body = map[string]any{"model": r.Model, "temperature": 0, "instructions": SystemPrompt, "input": []map[string]string{
			{"role": "user", "content": user}}}
	case APIMessages:
		url = strings.TrimSuffix(base, "/v1") + "/v1/messages"
		body = map[string]any{"model": r.Model, "max_tokens": 512, "temperature": 0, "system": SystemPrompt,
			"messages": []map[string]string{{"role": "user", "content": user}}}
	default:
		return Answer{}, fmt.Errorf("unknown API %q (chat, responses or messages)", r.API)
	}
	b, err := json.Marshal(body)
	if err != nil {
		return Answer{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return Answer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if r.APIKey != "" {
		if r.API == APIMessages {
			req.Header.Set("x-api-key", r.APIKey)
		} else {
			req.Header.Set("Authorization", "Bearer "+r.APIKey)
		}
	}
	if r.API == APIMessages {
		req.Header.Set("anthropic-version", "2023-06-01")
	}
	client := r.HTTP
	if client == nil {
		client = &http.Client{Timeout: 2 * time.Minute}
	}
	resp, err := client.Do(req)
	if err != nil {
		return Answer{}, fmt.Errorf("POST %s: the model did not answer", req.URL.Redacted())
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return Answer{}, fmt.Errorf("reading the answer: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		return Answer{}, fmt.Errorf("POST %s: status %d", req.URL.Redacted(), resp.StatusCode)
	}
	text, err := answerText(r.API, raw)
	if err != nil {
		return Answer{}, err
	}
	return Parse(text), nil
}

// answerText is the text of a model's response in the API's shape.
func answerText(api string, raw []byte) (string, error) {
	var parts []string
	switch api {
	case APIChat, "":
		var v struct {
			Choices []struct {
				Message struct {
					Content string `json:"content"`
				} `json:"message"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(raw, &v); err != nil || len(v.Choices) == 0 {
			return "", fmt.Errorf("the response is not a chat completion with a choice")
		}
		parts = append(parts, v.Choices[0].Message.Content)
	case APIResponses:
		var v struct {
			Output []struct {
				Type    string `json:"type"`
				Content []struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"content"`
			} `json:"output"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			return "", fmt.Errorf("the response is not a Responses API response")
		}
		for _, o := range v.Output {
			for _, c := range o.Content {
				if o.Type == "message" && c.Type == "output_text" {
					parts = append(parts, c.Text)
				}
			}
		}
	case APIMessages:
		var v struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			return "", fmt.Errorf("the response is not an Anthropic message")
		}
		for _, c := range v.Content {
			if c.Type == "text" {
				parts = append(parts, c.Text)
			}
		}
	}
	if len(parts) == 0 {
		return "", fmt.Errorf("the response holds no text")
	}
	// Several text blocks are read as one: anything around the object makes it unsure.
	return strings.Join(parts, "\n"), nil
}
