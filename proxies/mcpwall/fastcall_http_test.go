package mcpwall_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crashwall/chaos/proxies/internal/walltest"
	"github.com/crashwall/chaos/proxies/mcpwall"
)

// TestFastHTTPCallsWaitForANotification: the SDK answers a POSTed notification 202 and
// handles it later, in its session's goroutine. A call sent after it is answered only
// once the session has handled it (here notifications/initialized, held in the
// session): the call goes to the SDK, behind the notification, and the hub has counted
// the notification by the time the call is answered. Once it is handled the guard
// takes calls again. Without this a call the guard answered overtook the
// notification, and a DELETE right after could end the session with it never counted
// (TestFastHTTPSameAnswers, seen at load).
func TestFastHTTPCallsWaitForANotification(t *testing.T) {
	h, _ := walltest.NewTrial(t, "clean")
	srv := mcpwall.NewServer(h, "http")
	release := make(chan struct{})
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler { // outside countContacts
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/initialized" {
				<-release
			}
			return next(ctx, method, req)
		}
	})
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.Server }, &mcp.StreamableHTTPOptions{JSONResponse: true})
	ts := httptest.NewServer(mcpwall.GuardHTTP(h, handler, func(*http.Request) *mcpwall.Server { return srv }))
	t.Cleanup(ts.Close)

	c := walltest.NewRawMCP(t, ts.URL+"/mcp", nil) // initialize, then notifications/initialized (202, held)
	before := mcpwall.FastAnswered()
	answer := make(chan walltest.RawAnswer, 1)
	go func() { answer <- c.Post(t, callMsg(4, "read_email", `{}`), nil) }()
	var first walltest.RawAnswer
	select {
	case first = <-answer: // answered while the notification is held: the bug
	case <-time.After(500 * time.Millisecond):
		// Not answered yet, as it must not be. (A starved machine only makes this test
		// weaker, never wrong: after the release the call must be answered either way.)
		close(release)
		first = <-answer
	}
	initialized := h.Stats().Reach.Initialized
	select {
	case <-release:
	default:
		close(release)
	}
	if first.Status != http.StatusOK || !strings.Contains(string(first.Body), `"id":4,"result"`) {
		t.Fatalf("the call: %d %s", first.Status, first.Body)
	}
	// Initialized counts notifications/initialized and the call itself.
	if initialized < 2 {
		t.Errorf("the call was answered before its session handled notifications/initialized (Initialized %d when answered, want 2)", initialized)
	}
	if n := mcpwall.FastAnswered() - before; n != 0 {
		t.Errorf("the guard took %d calls past the SDK while a notification was queued, want 0", n)
	}
	if second := c.Call(t, callMsg(5, "read_email", `{}`)); !strings.Contains(string(second), `"id":5,"result"`) {
		t.Fatalf("the second call: %s", second)
	}
	if n := mcpwall.FastAnswered() - before; n != 1 {
		t.Errorf("the guard took %d calls past the SDK once the notification was handled, want 1", n)
	}
	if a := c.Post(t, `{"jsonrpc":"2.0","method":"notifications/no_such_thing"}`, nil); a.Status == http.StatusAccepted {
		t.Fatalf("an unknown notification was taken: %d %s", a.Status, a.Body)
	}
	if third := c.Call(t, callMsg(6, "read_email", `{}`)); !strings.Contains(string(third), `"id":6,"result"`) {
		t.Fatalf("the third call: %s", third)
	}
	if n := mcpwall.FastAnswered() - before; n != 2 {
		t.Errorf("a notification the SDK refused left the session's calls with the SDK (%d answered by the guard, want 2)", n)
	}
}
