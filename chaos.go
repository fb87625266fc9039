// Package chaos is what an agent written in Go imports to declare where its model calls
// stand, so that a model fault lands at the same step of the agent's procedure in every
// run, whatever other calls the agent adds (docs/model.md, "Positions"):
//
//	hc := &http.Client{Transport: chaos.Transport(nil)}
//	client := openai.NewClient(option.WithBaseURL(os.Getenv("OPENAI_BASE_URL")), option.WithHTTPClient(hc))
//	...
//	ctx = chaos.Position(ctx, "choose_tool", attempt)
//	resp, err := client.Chat.Completions.New(ctx, params)
//
// The transport adds the X-Chaos-Position and X-Chaos-Attempt headers to a request whose
// context carries a position; the model proxy ({llm_url}) reads and removes them before
// it forwards the call. A call without a position goes out untouched and stands at its
// ordinal. The package imports nothing of the rest of chaos, so it costs an agent nothing.
package chaos

import (
	"context"
	"net/http"
	"strconv"
)

// The headers by which a model call declares its position. The model proxy removes every
// X-Chaos-* header before it forwards a call.
const (
	PositionHeader = "X-Chaos-Position"
	AttemptHeader  = "X-Chaos-Attempt"
)

type positionKey struct{}

type position struct {
	name    string
	attempt int
}

// Position returns a context whose model calls stand at the step name, try attempt (1
// for the first; a value below 1 is taken as 1). A retry of the same step is the same
// name with the next attempt, so a fault armed for the first try does not also hit the
// retry.
func Position(ctx context.Context, name string, attempt int) context.Context {
	if attempt < 1 {
		attempt = 1
	}
	return context.WithValue(ctx, positionKey{}, position{name, attempt})
}

// PositionOf is the position ctx carries, if any.
func PositionOf(ctx context.Context) (name string, attempt int, ok bool) {
	p, ok := ctx.Value(positionKey{}).(position)
	return p.name, p.attempt, ok
}

// Transport wraps base (http.DefaultTransport when nil) so that every request whose
// context carries a Position declares it in headers. Give it to the model client's
// http.Client.
func Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return roundTripper{base}
}

type roundTripper struct{ base http.RoundTripper }

func (t roundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	name, attempt, ok := PositionOf(r.Context())
	if !ok || name == "" {
		return t.base.RoundTrip(r)
	}
	// A RoundTripper must not change the request it was given.
	r = r.Clone(r.Context())
	r.Header.Set(PositionHeader, name)
	r.Header.Set(AttemptHeader, strconv.Itoa(attempt))
	return t.base.RoundTrip(r)
}
