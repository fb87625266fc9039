package cdpwall

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"
)

// maxBody is the most of a body the record keeps; the rest is counted, not kept.
const maxBody = 4096

// secretWords name fields whose values are secrets: a body holding one is recorded only
// as its length.
var secretWords = []string{"password", "passwd", "token", "secret", "otp", "credential", "api_key", "apikey", "authorization", "cookie"}

// jwt is a JSON Web Token anywhere in a text (three base64url parts, the first a JSON
// header: "eyJ").
var jwt = regexp.MustCompile(`eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}`)

func secretName(k string) bool {
	k = strings.ToLower(k)
	for _, w := range secretWords {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// hasSecret says whether a body holds a secret field or a JWT: a JSON object (at any
// depth) or a form with a field named like a secret, or a token anywhere in its text.
func hasSecret(body []byte) bool {
	if len(body) == 0 {
		return false
	}
	if jwt.Match(body) {
		return true
	}
	var v any
	if json.Unmarshal(body, &v) == nil {
		return jsonSecret(v)
	}
	if q, err := url.ParseQuery(string(body)); err == nil {
		for k := range q {
			if secretName(k) {
				return true
			}
		}
	}
	// Multipart or other text: a secret's name followed by a value.
	low := strings.ToLower(string(body))
	for _, w := range secretWords {
		if i := strings.Index(low, w); i >= 0 && strings.ContainsAny(low[i:min(len(low), i+len(w)+40)], "=:\"") {
			return true
		}
	}
	return false
}

func jsonSecret(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if secretName(k) {
				return true
			}
			if jsonSecret(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if jsonSecret(e) {
				return true
			}
		}
	}
	return false
}

// bodyForRecord is what the record keeps of a body: "" for none; its length alone when it
// is secret (by URL or content); else the text, cut at maxBody, with the cut said.
func bodyForRecord(body []byte, secretURL bool) string {
	if len(body) == 0 {
		return ""
	}
	if secretURL || hasSecret(body) {
		return fmt.Sprintf("[secret: %d bytes, not recorded]", len(body))
	}
	if !utf8.Valid(body) {
		return fmt.Sprintf("[binary: %d bytes]", len(body))
	}
	if len(body) > maxBody {
		cut := maxBody
		for cut > 0 && !utf8.RuneStart(body[cut]) {
			cut--
		}
		return string(body[:cut]) + fmt.Sprintf("... [%d bytes more]", len(body)-cut)
	}
	return string(body)
}

// urlForRecord is a URL as the record keeps it: the values of query fields named like
// secrets, and any token in it, replaced by their length; a secret URL keeps only its
// scheme, host and path.
func urlForRecord(raw string, secretURL bool) string {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Sprintf("[unparsable URL: %d bytes]", len(raw))
	}
	u.User = nil
	if secretURL && u.RawQuery != "" {
		u.RawQuery = fmt.Sprintf("[secret: %d bytes]", len(u.RawQuery))
		return u.String()
	}
	if u.RawQuery != "" {
		q := u.Query()
		changed := false
		for k, vs := range q {
			for i, v := range vs {
				if secretName(k) || jwt.MatchString(v) {
					vs[i] = fmt.Sprintf("[secret:%d]", len(v))
					changed = true
				}
			}
		}
		if changed {
			u.RawQuery = q.Encode()
		}
	}
	s := u.String()
	return jwt.ReplaceAllStringFunc(s, func(t string) string { return fmt.Sprintf("[jwt:%d]", len(t)) })
}
