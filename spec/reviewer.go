package spec

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// ReviewerSpec is model.reviewer: the model that reviews a trial whose world the record
// cannot tell (package reviewer). It is not part of the spec's Identity.
type ReviewerSpec struct {
	// API is chat (OpenAI Chat Completions), responses (OpenAI Responses) or messages
	// (Anthropic Messages).
	API string `json:"api"`
	// BaseURL is the API's base as its SDK takes it; it may hold ${VAR}s.
	BaseURL string `json:"base_url"`
	Model   string `json:"model"`
	// APIKey is a ${VAR} reference, expanded only where the review is made; never a key.
	APIKey string `json:"api_key,omitempty"`
}

// ReviewerAPIs are the values model.reviewer.api takes.
var ReviewerAPIs = []string{"chat", "responses", "messages"}

var reviewerKeys = []string{"api", "base_url", "model", "api_key"}

// reviewer reads model.reviewer (nil when absent).
func (d *decoder) reviewer(n *yaml.Node) *ReviewerSpec {
	if isNull(deref(n)) {
		return nil
	}
	f := d.fields(n, "model.reviewer", reviewerKeys, map[string]string{"url": "base_url", "upstream": "base_url", "key": "api_key"})
	r := &ReviewerSpec{
		API:     d.text(f["api"], "model.reviewer.api"),
		BaseURL: d.text(f["base_url"], "model.reviewer.base_url"),
		Model:   d.text(f["model"], "model.reviewer.model"),
		APIKey:  d.text(f["api_key"], "model.reviewer.api_key"),
	}
	if r.API == "" {
		r.API = "chat"
	}
	if !slices.Contains(ReviewerAPIs, r.API) {
		d.errorf(f["api"], "model.reviewer.api %q: one of %s", r.API, strings.Join(ReviewerAPIs, ", "))
	}
	switch {
	case r.BaseURL == "":
		d.errorf(deref(n), "model.reviewer needs base_url: the API the reviewer model is asked through")
	case !envRef.MatchString(r.BaseURL):
		if err := checkUpstream(r.BaseURL); err != nil {
			d.errorf(f["base_url"], "model.reviewer.base_url %q: %v", r.BaseURL, err)
		}
	}
	if r.Model == "" {
		d.errorf(deref(n), "model.reviewer needs model: the reviewer model's name")
	}
	if r.APIKey != "" && strings.TrimSpace(envRef.ReplaceAllString(r.APIKey, "")) != "" {
		d.errorf(f["api_key"], "model.reviewer.api_key must be a ${VAR} reference (api_key: ${OPENAI_API_KEY}): a spec never holds a key")
	}
	return r
}

// String names the reviewer as a verdict's reason does.
func (r ReviewerSpec) String() string { return fmt.Sprintf("model:%s", r.Model) }
