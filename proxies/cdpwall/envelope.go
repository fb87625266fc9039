package cdpwall

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// The guard judges a command by what reaches the browser. A command may carry another:
//
//	{"method":"Target.sendMessageToTarget","params":{"sessionId":S,"message":"{\"method\":\"Page.printToPDF\",...}"}}
//	    └─ the browser runs the inner command on session S (and that one may carry a third)
//
// so every rule is applied to each command down to the innermost one. Two methods open
// a way to the browser the guard never sees, and are refused whatever the rules:
// Target.exposeDevToolsProtocol (it gives the page's own script a CDP binding) and
// Target.openDevTools (DevTools' own window speaks CDP to the target). Runtime.evaluate
// carries script, not CDP: the page's script cannot reach CDP without that binding.
const (
	envelopeMethod = "Target.sendMessageToTarget"
	// maxEnvelopes bounds how deep commands may be carried inside one another.
	maxEnvelopes = 4
)

// unguarded are the methods that open a channel to the browser past the guard.
var unguarded = map[string]string{
	"Target.exposeDevToolsProtocol": "it would give the page's script a CDP channel to the browser the guard never sees",
	"Target.openDevTools":           "it would open DevTools, whose CDP to the target the guard never sees",
}

// navigators are the methods that load a URL the agent names.
var navigators = []string{"Page.navigate", "Target.createTarget"}

// privilegedScheme says why a URL is never loaded for the agent: DevTools' own pages
// (devtools://, chrome-devtools://) speak CDP to any browser address they are given,
// past the guard, and the browser's own pages (chrome://) drive the browser.
func privilegedScheme(params json.RawMessage) string {
	var p struct {
		URL string `json:"url"`
	}
	if strictParams(params, &p) != nil {
		return "its url cannot be read"
	}
	scheme, _, ok := strings.Cut(strings.ToLower(strings.TrimSpace(p.URL)), ":")
	if !ok {
		return ""
	}
	switch scheme {
	case "devtools", "chrome-devtools":
		return "a DevTools page (" + scheme + "://) speaks CDP to the browser past the guard"
	case "chrome", "chrome-untrusted":
		return "the browser's own pages (" + scheme + "://) drive the browser"
	}
	return ""
}

// readCommand reads one CDP command as the browser reads it: its keys exactly as
// written (Go's decoder would also take "Method" for "method", the browser would not),
// none twice, an integer id and a string method. What cannot be read so is refused,
// never passed on: the guard cannot say what the browser would make of it.
func readCommand(b []byte) (message, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return message{}, errors.New("a CDP message must be a JSON object")
	}
	fields := map[string]json.RawMessage{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return message{}, errors.New("a CDP message the guard cannot read")
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return message{}, errors.New("a CDP message the guard cannot read")
		}
		if _, dup := fields[k]; dup {
			var id message
			json.Unmarshal(fields["id"], &id.ID)
			return id, fmt.Errorf("a CDP message with the key %q twice", k)
		}
		fields[k] = v
	}
	if _, err := dec.Token(); err != nil {
		return message{}, errors.New("a CDP message the guard cannot read")
	}
	if _, err := dec.Token(); err == nil {
		return message{}, errors.New("a CDP message followed by more text")
	}
	// The id first, so that a refusal answers the command it refuses.
	var m message
	if v, ok := fields["id"]; ok && json.Unmarshal(v, &m.ID) != nil {
		return message{}, fmt.Errorf("a CDP message whose \"id\" is not a whole number")
	}
	for k, v := range fields {
		var err error
		switch k {
		case "id":
		case "method":
			err = json.Unmarshal(v, &m.Method)
		case "params":
			m.Params = v
		case "sessionId":
			err = json.Unmarshal(v, &m.SessionID)
		default:
			for _, known := range []string{"id", "method", "params", "sessionId"} {
				if strings.EqualFold(k, known) {
					err = fmt.Errorf("%q is not %q", k, known)
				}
			}
		}
		if err != nil {
			return message{ID: m.ID}, fmt.Errorf("a CDP message whose %q the guard cannot read (%v)", k, err)
		}
	}
	if m.Method == "" {
		return message{ID: m.ID}, errors.New("a CDP message with no method")
	}
	return m, nil
}

// inner is the command an envelope carries, on the session or target it names.
func inner(m message) (message, string, error) {
	var p struct {
		Message   *string `json:"message"`
		SessionID string  `json:"sessionId"`
		TargetID  string  `json:"targetId"`
	}
	if err := strictParams(m.Params, &p); err != nil || p.Message == nil {
		return message{}, "", fmt.Errorf("%s whose message the guard cannot read", m.Method)
	}
	in, err := readCommand([]byte(*p.Message))
	if err != nil {
		return message{}, "", fmt.Errorf("%s carrying %v", m.Method, err)
	}
	in.SessionID = p.SessionID
	return in, p.TargetID, nil
}

// strictParams decodes params into v, refusing a key written twice or in another case
// than v's (the browser reads only the exact one).
func strictParams(params json.RawMessage, v any) error {
	if _, err := readObject(params); err != nil {
		return err
	}
	return json.Unmarshal(params, v)
}

// readObject reads a JSON object's keys, refusing one written twice or two that differ
// only in case.
func readObject(b json.RawMessage) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	out := map[string]json.RawMessage{}
	folded := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if folded[strings.ToLower(k)] {
			return nil, fmt.Errorf("the key %q twice", k)
		}
		folded[strings.ToLower(k)] = true
		out[k] = v
	}
	return out, nil
}
