package redact

import (
	"bytes"
	"strings"
	"testing"
)

func TestBytes(t *testing.T) {
	s := &Set{}
	s.Add("TOKEN", "s3cr3t-<&>value")
	s.Add("AUTH", "Bearer s3cr3t-<&>value")
	s.Add("SHORT", "standin") // too short: ignored
	tests := []struct{ name, in, want string }{
		{"raw", "key=s3cr3t-<&>value!", "key=[redacted:TOKEN]!"},
		{"longest wins", "h: Bearer s3cr3t-<&>value", "h: [redacted:AUTH]"},
		{"JSON, HTML escaped", `{"v":"s3cr3t-\u003c\u0026\u003evalue"}`, `{"v":"[redacted:TOKEN]"}`},
		{"URL-encoded", "?k=s3cr3t-%3C%26%3Evalue", "?k=[redacted:TOKEN]"},
		{"HTML-escaped", "<p>s3cr3t-&lt;&amp;&gt;value</p>", "<p>[redacted:TOKEN]</p>"},
		{"twice", "s3cr3t-<&>values3cr3t-<&>value", "[redacted:TOKEN][redacted:TOKEN]"},
		{"short values stay", "key standin", "key standin"},
		{"nothing", "plain", "plain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(s.Bytes([]byte(tt.in))); got != tt.want {
				t.Errorf("Bytes(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if got := s.String(tt.in); got != tt.want {
				t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestWriterSplit writes a text holding values in every split into two and three writes:
// the output is always the whole text redacted.
func TestWriterSplit(t *testing.T) {
	s := &Set{}
	s.Add("PW", "hunter2-password")
	s.Add("KEY", "sk-abcdefgh")
	text := "fill('hunter2-password') then sk-abcdefgh and hunter2-passwor end sk-abcdefg"
	want := "fill('[redacted:PW]') then [redacted:KEY] and hunter2-passwor end sk-abcdefg"
	for i := 0; i <= len(text); i++ {
		for j := i; j <= len(text); j += 7 {
			var out bytes.Buffer
			w := s.NewWriter(&out)
			for _, part := range []string{text[:i], text[i:j], text[j:]} {
				if n, err := w.Write([]byte(part)); err != nil || n != len(part) {
					t.Fatalf("write: %d %v", n, err)
				}
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if out.String() != want {
				t.Fatalf("split at %d, %d: %q, want %q", i, j, out.String(), want)
			}
		}
	}
}

func TestEmptySetPassesThrough(t *testing.T) {
	s := &Set{}
	in := []byte("anything at all")
	if got := s.Bytes(in); &got[0] != &in[0] {
		t.Error("an empty set copied its input")
	}
	var out bytes.Buffer
	w := s.NewWriter(&out)
	w.Write(in)
	if out.String() != string(in) {
		t.Errorf("got %q", out.String())
	}
}

func TestBound(t *testing.T) {
	s := &Set{}
	for i := range MaxValues + 10 {
		s.Add("V", strings.Repeat("x", 6)+string(rune('a'+i%26))+strings.Repeat("y", i))
	}
	if s.Len() != MaxValues {
		t.Errorf("%d values, want %d", s.Len(), MaxValues)
	}
}

func BenchmarkBytesNoSecrets(b *testing.B) {
	s := &Set{}
	row := []byte(strings.Repeat(`{"type":"call","tool":"note","args":{"value":"x"}}`, 4))
	for b.Loop() {
		s.Bytes(row)
	}
}
