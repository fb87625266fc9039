package spec

import (
	"reflect"
	"testing"
)

func TestSecrets(t *testing.T) {
	env := map[string]string{"KEY": "k-123456", "TOKEN": "t-abcdef", "PW": "p-secret", "HOOK": "https://example.org/h", "STANDIN": "http://127.0.0.1:1"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	s := &Spec{
		Agent: Agent{Env: map[string]string{"API_KEY": "${KEY}", "PLAIN": "literal", "UNSET": "${NOPE}"}},
		Servers: []Server{
			{Name: "crm", Env: map[string]string{"CRM_TOKEN": "${TOKEN}"}},
			{Name: "docs", URL: "https://docs.example.org/mcp?k=${PW}", Headers: map[string]string{"Authorization": "Bearer ${TOKEN}"}},
		},
		Model: ModelSpec{Upstream: "${STANDIN}/v1", Reviewer: &ReviewerSpec{APIKey: "${KEY}"}},
	}
	want := []Secret{
		{"KEY", "k-123456"},
		{"TOKEN", "t-abcdef"},
		{"AUTHORIZATION", "Bearer t-abcdef"}, {"TOKEN", "t-abcdef"},
		{"DOCS_URL", "https://docs.example.org/mcp?k=p-secret"}, {"PW", "p-secret"},
		{"KEY", "k-123456"},
	}
	if got := s.Secrets(lookup); !reflect.DeepEqual(got, want) {
		t.Errorf("Secrets:\n got %v\nwant %v", got, want)
	}
}
