package probes

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// maxBody bounds what an HTTP check reads of a reply.
const maxBody = 10 << 20

// HTTPCheck GETs url and compares the status (0: any 2xx) and, when jsonPath is set,
// the value at that path of the JSON body with want (JSON-like equality; nil wants
// null). A server that cannot be reached gives no verdict; a wrong status, a body that
// is not JSON or a missing path is a world that is not right.
func HTTPCheck(ctx context.Context, rawURL string, wantStatus int, jsonPath string, want any) Result {
	where := displayURL(rawURL)
	var path []pathStep
	if jsonPath != "" {
		var err error
		if path, err = parseJSONPath(jsonPath); err != nil {
			return noVerdict("http check %s: %v", where, err)
		}
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return noVerdict("http check %s: %v", where, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return noVerdict("http check: GET %s: %v", where, unwrapURLError(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return noVerdict("http check: GET %s: reading the reply: %v", where, err)
	}

	statusOK := resp.StatusCode == wantStatus || (wantStatus == 0 && resp.StatusCode/100 == 2)
	if !statusOK {
		want := strconv.Itoa(wantStatus)
		if wantStatus == 0 {
			want = "2xx"
		}
		return Result{Detail: fmt.Sprintf("GET %s: status %d, want %s", where, resp.StatusCode, want)}
	}
	if jsonPath == "" {
		return Result{OK: true, Detail: fmt.Sprintf("GET %s: status %d", where, resp.StatusCode)}
	}
	var doc any
	if err := json.Unmarshal(body, &doc); err != nil {
		return Result{Detail: fmt.Sprintf("GET %s: the body is not JSON: %q", where, clip(strings.TrimSpace(string(body)), 120))}
	}
	got, err := lookup(doc, path)
	if err != nil {
		return Result{Detail: fmt.Sprintf("GET %s: %s %v, want %s", where, jsonPath, err, show(want))}
	}
	if !sameValue(got, want) {
		return Result{Detail: fmt.Sprintf("GET %s: %s = %s, want %s", where, jsonPath, show(got), show(want))}
	}
	return Result{OK: true, Detail: fmt.Sprintf("GET %s: %s = %s", where, jsonPath, show(got))}
}

// displayURL is the URL without credentials or query, which may hold tokens.
func displayURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

// unwrapURLError drops url.Error's copy of the URL, which may hold a token.
func unwrapURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// pathStep is one step of a JSON path: a key or, when index >= 0, a list index.
type pathStep struct {
	key   string
	index int
}

// parseJSONPath reads the simple JSON paths checks use: $.a.b[0].c and $["a b"].
func parseJSONPath(p string) ([]pathStep, error) {
	bad := func(why string) ([]pathStep, error) {
		return nil, fmt.Errorf("bad JSON path %q: %s", p, why)
	}
	if !strings.HasPrefix(p, "$") {
		return bad("it must start with $")
	}
	var steps []pathStep
	rest := p[1:]
	for rest != "" {
		switch rest[0] {
		case '.':
			rest = rest[1:]
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			if end == 0 {
				return bad("empty key")
			}
			steps = append(steps, pathStep{key: rest[:end], index: -1})
			rest = rest[end:]
		case '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return bad("unclosed [")
			}
			inner := rest[1:end]
			rest = rest[end+1:]
			if len(inner) >= 2 && (inner[0] == '"' || inner[0] == '\'') && inner[len(inner)-1] == inner[0] {
				steps = append(steps, pathStep{key: inner[1 : len(inner)-1], index: -1})
				continue
			}
			n, err := strconv.Atoi(inner)
			if err != nil || n < 0 {
				return bad(fmt.Sprintf("[%s] is neither an index nor a quoted key", inner))
			}
			steps = append(steps, pathStep{index: n})
		default:
			return bad(fmt.Sprintf("unexpected %q", rest[0]))
		}
	}
	return steps, nil
}

// lookup follows path in doc; the error says where it stopped.
func lookup(doc any, path []pathStep) (any, error) {
	cur := doc
	seen := "$"
	for _, s := range path {
		if s.index >= 0 {
			list, ok := cur.([]any)
			if !ok {
				return nil, fmt.Errorf("not found (%s is not a list)", seen)
			}
			if s.index >= len(list) {
				noun := "elements"
				if len(list) == 1 {
					noun = "element"
				}
				return nil, fmt.Errorf("not found (%s has %d %s)", seen, len(list), noun)
			}
			cur = list[s.index]
			seen += "[" + strconv.Itoa(s.index) + "]"
			continue
		}
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("not found (%s is not an object)", seen)
		}
		v, ok := obj[s.key]
		if !ok {
			return nil, fmt.Errorf("not found (%s has no %q)", seen, s.key)
		}
		cur = v
		seen += "." + s.key
	}
	return cur, nil
}
