// Package redact replaces the secret values chaos handed out with [redacted:NAME] in
// everything chaos writes.
//
// chaos knows every secret it fills in: the ${VAR}s of agent.env (a browser agent's
// typed password among them), of a real server's env, headers and URL query, the
// reviewer's key, and the model key the model proxy forwards. Where a value is resolved,
// it is added to Known, the process's one registry; every writer (the agent's stdout
// and stderr files, the record, the run folder's JSON, the report, the results database,
// the server's log, every request to Temporal) passes its bytes through Known first.
//
//	value resolved ─> Known.Add(name, value)
//	                     │
//	   bytes ─> Known.Bytes / Known.Writer / the Temporal interceptor ─> file, row, history
//
// A value is replaced as written and in its common encodings: JSON-escaped (with and
// without HTML escaping), URL-encoded (query and path) and HTML-escaped. Values shorter
// than MinLen bytes are not secrets worth the name and are left alone: replacing every
// "1" or "true" would garble everything and hide nothing. Known keeps what it learns for
// the life of the process (a run's last payloads, Aggregate's among them, come after its
// trials' teardown), at most MaxValues values, the oldest dropped first.
package redact

import (
	"bytes"
	"encoding/json"
	"html"
	"io"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// MinLen is the shortest value treated as a secret.
const MinLen = 8

// MaxValues bounds the values a Set holds; past it, the oldest are dropped.
const MaxValues = 1024

// Set is a set of named secret values. The zero value is empty and ready; it is safe
// for concurrent use, and reading it (Bytes, String, Writer) takes no lock.
type Set struct {
	mu     sync.Mutex
	values []named // in the order added, for the bound
	pats   atomic.Pointer[patterns]
}

type named struct {
	name, value string
	forms       []string // forms(value), computed once
}

// patterns is an immutable snapshot: every form of every value, longest first.
type patterns struct {
	list   []pattern
	maxLen int
}

type pattern struct {
	find    []byte
	replace []byte
}

// Known is the process's registry: every secret value this process has filled in.
var Known = &Set{}

// Marker is what a value of the named secret becomes.
func Marker(name string) string { return "[redacted:" + name + "]" }

// Add adds value under name (the variable or header it came from). A value shorter than
// MinLen is ignored; a value already held keeps its first name.
func (s *Set) Add(name, value string) {
	if len(value) < MinLen {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range s.values {
		if v.value == value {
			return
		}
	}
	s.values = append(s.values, named{name, value, forms(value)})
	if len(s.values) > MaxValues {
		s.values = slices.Delete(s.values, 0, len(s.values)-MaxValues)
	}
	s.rebuild()
}

// Empty says whether the set holds no value; it takes no lock.
func (s *Set) Empty() bool { return s.snapshot() == nil }

// Len is the number of values held.
func (s *Set) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.values)
}

func (s *Set) rebuild() {
	p := &patterns{}
	seen := map[string]bool{}
	for _, v := range s.values {
		for _, f := range v.forms {
			if len(f) < MinLen || seen[f] {
				continue
			}
			seen[f] = true
			p.list = append(p.list, pattern{find: []byte(f), replace: []byte(Marker(v.name))})
			p.maxLen = max(p.maxLen, len(f))
		}
	}
	// Longest first: a header's whole value "Bearer X" before X.
	slices.SortStableFunc(p.list, func(a, b pattern) int { return len(b.find) - len(a.find) })
	s.pats.Store(p)
}

// forms are the ways value may be written: as it is, JSON-escaped, URL-encoded and
// HTML-escaped.
func forms(value string) []string {
	out := []string{value}
	var b bytes.Buffer
	for _, escapeHTML := range []bool{true, false} {
		b.Reset()
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(escapeHTML)
		if enc.Encode(value) == nil {
			q := strings.TrimSuffix(b.String(), "\n")
			out = append(out, q[1:len(q)-1])
		}
	}
	return append(out, url.QueryEscape(value), url.PathEscape(value), html.EscapeString(value))
}

func (s *Set) snapshot() *patterns {
	p := s.pats.Load()
	if p == nil || len(p.list) == 0 {
		return nil
	}
	return p
}

// Bytes is b with every value replaced by its marker: b itself when it holds none.
func (s *Set) Bytes(b []byte) []byte {
	p := s.snapshot()
	if p == nil {
		return b
	}
	out, _ := p.replace(b, true)
	return out
}

// String is Bytes for a string.
func (s *Set) String(v string) string {
	p := s.snapshot()
	if p == nil || !p.any([]byte(v)) {
		return v
	}
	out, _ := p.replace([]byte(v), true)
	return string(out)
}

// any says whether b holds a value.
func (p *patterns) any(b []byte) bool {
	for _, pt := range p.list {
		if bytes.Contains(b, pt.find) {
			return true
		}
	}
	return false
}

// next is the earliest match in b at or after from: its index and pattern (-1 if none).
// At an index where several match, the longest wins (the list is longest first).
func (p *patterns) next(b []byte) (int, *pattern) {
	at, which := -1, (*pattern)(nil)
	for i := range p.list {
		pt := &p.list[i]
		limit := len(b)
		if at >= 0 {
			limit = min(len(b), at+len(pt.find)) // only an earlier start can win
		}
		if j := bytes.Index(b[:limit], pt.find); j >= 0 && (at < 0 || j < at) {
			at, which = j, pt
		}
	}
	return at, which
}

// replace replaces the values in b. With final false, it stops short of the last bytes
// that could still be the start of a value the next write completes, and returns how
// many bytes of b it consumed; the caller keeps the rest. b is returned as it is when
// final and nothing matched.
func (p *patterns) replace(b []byte, final bool) ([]byte, int) {
	at, pt := p.next(b)
	if at < 0 {
		if final {
			return b, len(b)
		}
		keep := min(len(b), p.maxLen-1)
		return b[:len(b)-keep], len(b) - keep
	}
	var out []byte
	rest := b
	done := 0
	for at >= 0 {
		// A match so near the end that a longer value could start at it: wait for more.
		if !final && at+p.maxLen > len(rest) {
			out = append(out, rest[:at]...)
			return out, done + at
		}
		out = append(out, rest[:at]...)
		out = append(out, pt.replace...)
		rest = rest[at+len(pt.find):]
		done += at + len(pt.find)
		at, pt = p.next(rest)
	}
	if final {
		return append(out, rest...), done + len(rest)
	}
	keep := min(len(rest), p.maxLen-1)
	out = append(out, rest[:len(rest)-keep]...)
	return out, done + len(rest) - keep
}

// Writer redacts a stream: a value split between two writes is still found, since the
// last bytes that could begin one are held back until the next write or Flush.
type Writer struct {
	set  *Set
	w    io.Writer
	held []byte
}

// NewWriter redacts what is written to w with the values of s (as they are at each
// write). Flush writes what is held back.
func (s *Set) NewWriter(w io.Writer) *Writer { return &Writer{set: s, w: w} }

// Write redacts p into the underlying writer, holding back a possible partial value.
// It reports len(p) written unless the underlying writer fails.
func (w *Writer) Write(p []byte) (int, error) {
	pats := w.set.snapshot()
	if pats == nil && len(w.held) == 0 {
		_, err := w.w.Write(p)
		if err != nil {
			return 0, err
		}
		return len(p), nil
	}
	if pats == nil {
		if err := w.Flush(); err != nil {
			return 0, err
		}
		return w.Write(p)
	}
	buf := append(w.held, p...)
	out, n := pats.replace(buf, false)
	if len(out) > 0 {
		if _, err := w.w.Write(out); err != nil {
			return 0, err
		}
	}
	w.held = append([]byte(nil), buf[n:]...)
	return len(p), nil
}

// Flush writes the bytes held back, redacted.
func (w *Writer) Flush() error {
	if len(w.held) == 0 {
		return nil
	}
	out := w.set.Bytes(w.held)
	w.held = nil
	_, err := w.w.Write(out)
	return err
}

// EachWrite is a writer that redacts each write whole: for writers that write whole
// lines or documents at a time (a log handler), where nothing need be held back.
func (s *Set) EachWrite(w io.Writer) io.Writer { return eachWrite{s, w} }

type eachWrite struct {
	s *Set
	w io.Writer
}

// Unwrap is the writer redacted into (to ask whether it is a terminal).
func (e eachWrite) Unwrap() io.Writer { return e.w }

func (e eachWrite) Write(p []byte) (int, error) {
	if _, err := e.w.Write(e.s.Bytes(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
